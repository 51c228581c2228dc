/* nvml.c - NVML through dlopen (contract: nvml.h).
 *
 * The few prototypes are declared here rather than taken from nvml.h, which
 * is not part of every CUDA toolkit install. Every NVML function returns
 * nvmlReturn_t, an enum whose success value is 0; nvmlDevice_t is an
 * opaque pointer.
 */
#include "nvml.h"

#include <dlfcn.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2

typedef int (*nvml_void_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *pci, void **dev);
typedef int (*nvml_driver_fn)(char *buf, unsigned int len);

/* dlsym's object pointer into a function pointer, without the cast ISO C
 * leaves undefined (POSIX guarantees the representations agree). */
static void nvml_sym(void *lib, const char *name, void *fn_out, size_t fn_size)
{
    void *p = dlsym(lib, name);
    memcpy(fn_out, &p, fn_size);
}

void nvml_open(nvml *n, const char *pci_bus_id)
{
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return;
    nvml_void_fn init = NULL;
    nvml_by_pci_fn by_pci = NULL;
    nvml_driver_fn driver = NULL;
    nvml_sym(n->lib, "nvmlInit_v2", &init, sizeof init);
    nvml_sym(n->lib, "nvmlShutdown", &n->shutdown, sizeof n->shutdown);
    nvml_sym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2", &by_pci, sizeof by_pci);
    nvml_sym(n->lib, "nvmlSystemGetDriverVersion", &driver, sizeof driver);
    nvml_sym(n->lib, "nvmlDeviceGetClockInfo", &n->clock_info, sizeof n->clock_info);
    /* Renamed in newer drivers ("clock event reasons", same bits); the
     * old name is still exported, but prefer the new one. */
    nvml_sym(n->lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->reasons, sizeof n->reasons);
    if (!n->reasons)
        nvml_sym(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->reasons,
                 sizeof n->reasons);
    if (!init || !n->shutdown || init() != NVML_SUCCESS) {
        dlclose(n->lib);
        memset(n, 0, sizeof *n);
        return;
    }
    if (driver) {
        char buf[80]; /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE: less is refused */
        if (driver(buf, sizeof buf) == NVML_SUCCESS) {
            const size_t len = strnlen(buf, sizeof n->driver - 1);
            memcpy(n->driver, buf, len);
            n->driver[len] = '\0';
        }
    }
    if (!by_pci || !pci_bus_id || by_pci(pci_bus_id, &n->device) != NVML_SUCCESS)
        n->device = NULL;
}

void nvml_close(nvml *n)
{
    if (n->lib) {
        n->shutdown();
        dlclose(n->lib);
    }
    memset(n, 0, sizeof *n);
}

/* 1 when reasons holds any bit of NVML_THROTTLE_MASK, else 0. */
static int nvml_throttled(unsigned long long reasons)
{
    return (reasons & NVML_THROTTLE_MASK) != 0;
}

void nvml_read(const nvml *n, nvml_clocks *c)
{
    c->sm_mhz = c->mem_mhz = -1;
    c->reasons = 0;
    c->throttled = -1;
    if (!n->device)
        return;
    unsigned int mhz;
    if (n->clock_info && n->clock_info(n->device, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS)
        c->sm_mhz = (int)mhz;
    if (n->clock_info && n->clock_info(n->device, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS)
        c->mem_mhz = (int)mhz;
    unsigned long long r;
    if (n->reasons && n->reasons(n->device, &r) == NVML_SUCCESS) {
        c->reasons = r;
        c->throttled = nvml_throttled(r);
    }
}
