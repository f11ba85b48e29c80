/* A program linked the classic way (-lcuda against the toolkit stub, names macro-renamed by
 * cuda.h). Run with the software driver first on LD_LIBRARY_PATH, it must bind to it. */
#include <cuda.h>
#include <stdio.h>
#include <swcuda/control.h>

#define CHECK(call, expected)                                                   \
  do {                                                                          \
    CUresult r_ = (call);                                                       \
    if (r_ != (expected)) {                                                     \
      printf("%s returned %d, expected %d\n", #call, (int)r_, (int)(expected)); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

int main(void) {
  int count = 0;
  CUcontext ctx = NULL;
  size_t bytes = 0;
  const void* table = NULL;
  CHECK(cuInit(0), CUDA_SUCCESS);
  CHECK(cuDeviceGetCount(&count), CUDA_SUCCESS);
  CHECK(cuCtxCreate(&ctx, NULL, 0, 0), CUDA_SUCCESS); /* cuCtxCreate_v4 */
  CHECK(cuDeviceTotalMem(&bytes, 0), CUDA_SUCCESS);   /* cuDeviceTotalMem_v2 */
  CHECK(cuCtxDestroy(ctx), CUDA_SUCCESS);             /* cuCtxDestroy_v2 */
  CHECK(cuGetExportTable(&table, &SWCU_CONTROL_TABLE_ID), CUDA_SUCCESS);
  if (((const swcu_control*)table)->call_count("cuCtxCreate_v4") != 1) {
    printf("cuCtxCreate_v4 was not counted\n");
    return 1;
  }
  printf("ok: %d device(s)\n", count);
  return 0;
}
