/* nvml.h - GPU clocks and throttle reasons from NVML, loaded at run time.
 *
 * libnvidia-ml.so.1 comes with the driver, not the toolkit, so it is opened
 * with dlopen: a machine without it (or a GPU NVML cannot find) gives
 * "unknown" values (-1), never an error. The device is matched by PCI bus
 * id, because a CUDA ordinal and an NVML index differ in general (e.g. with
 * CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER=FASTEST_FIRST).
 *
 * Called only in the sweep worker, which owns the CUDA context.
 */
#ifndef NVML_H
#define NVML_H

/* Throttle (clock event) reasons that mean the clocks were cut below what
 * the GPU would run at, so a timing taken then is slow for reasons outside
 * the kernel: SW power cap 0x4, HW slowdown 0x8, SW thermal slowdown 0x20,
 * HW thermal slowdown 0x40, HW power brake 0x80. Idle (0x1), application
 * clock setting (0x2), sync boost (0x10) and display clock (0x100) are
 * not throttling. */
#define NVML_THROTTLE_MASK 0xECULL

typedef struct nvml {
    void *lib;    /* dlopen handle, NULL when NVML is absent */
    void *device; /* nvmlDevice_t, NULL when the GPU was not found */
    int (*clock_info)(void *dev, int type, unsigned int *mhz);
    int (*reasons)(void *dev, unsigned long long *mask);
    int (*shutdown)(void);
    char driver[32]; /* driver version text ("580.95.05"), "" when unknown */
} nvml;

typedef struct nvml_clocks {
    int sm_mhz, mem_mhz;        /* current clocks, -1 when unknown */
    unsigned long long reasons; /* current throttle reasons, 0 when unknown */
    int throttled;              /* 1 / 0 by NVML_THROTTLE_MASK, -1 unknown */
} nvml_clocks;

/* Opens NVML for the GPU at pci_bus_id (cudaDeviceGetPCIBusId text). Never
 * fails: on any problem *n stays usable and reads give "unknown". */
void nvml_open(nvml *n, const char *pci_bus_id);
void nvml_close(nvml *n);

/* Reads the current clocks and throttle reasons. */
void nvml_read(const nvml *n, nvml_clocks *c);

#endif /* NVML_H */
