// registry.cu - the table of compiled instances, and queries about them.
//
// The table itself is generated (build/gen/registry_table.inc) from the
// union of the points the spaces accept; see scripts/geninst.c. Family-
// neutral: an entry (a family's instance macro) carries what a query needs.
#include <cuda_runtime.h>
#include <stdlib.h>

#include "build_id.h"
#include "fa_launch.h"

#include "registry_table.inc" // defines fa_table[] (sorted) and FA_TABLE_LEN

extern "C" int fa_registry_count(void)
{
    return FA_TABLE_LEN;
}

extern "C" const fa_instance *fa_registry_get(int i)
{
    return (i >= 0 && i < FA_TABLE_LEN) ? fa_table[i] : NULL;
}

extern "C" const fa_instance *fa_registry_find(const fa_config *c)
{
    int lo = 0, hi = FA_TABLE_LEN - 1; // fa_table is in fa_config_cmp order
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        const int d = fa_config_cmp(&fa_table[mid]->cfg, c);
        if (d == 0)
            return fa_table[mid];
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

extern "C" const char *fa_build_id(void)
{
    return FA_BUILD_ID;
}
extern "C" const char *fa_build_archs(void)
{
    return FA_BUILD_ARCHS;
}

extern "C" int fa_cta_clock_ns(void)
{
    return FA_CTA_CLOCK_IS_NS;
}

extern "C" long fa_instance_grid_ctas(const fa_instance *in, const fa_args *a)
{
    return (long)((a->seq_len + in->block_rows - 1) / in->block_rows) * a->batch * a->heads;
}

extern "C" int fa_instance_attrs(const fa_instance *in, fa_attrs *out)
{
    const long smem = in->smem_bytes;
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, in->kernel);
    if (e != cudaSuccess)
        return (int)e;
    // Static shared memory counts against the same 48 KB: 4 B of it beside
    // 48 KB of dynamic needs the opt-in too (the GPU's own limit, up to
    // 227 KB on sm_90, is what the occupancy query then answers by).
    if (fa_smem_optin(smem, (long)fa.sharedSizeBytes)) {
        e = cudaFuncSetAttribute(in->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem);
        if (e != cudaSuccess)
            return (int)e;
    }
    int blocks = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, in->kernel, in->threads,
                                                      (size_t)smem);
    if (e != cudaSuccess)
        return (int)e;
    out->regs = fa.numRegs;
    out->smem_static = (int)fa.sharedSizeBytes;
    out->smem_dynamic = smem;
    out->local_bytes = (int)fa.localSizeBytes;
    out->max_blocks_per_sm = blocks;
    return 0;
}
