// Conformance kernels: generic addressing across state spaces, space tests and conversions,
// cache-hinted loads and stores, the device heap (malloc/free, new/delete), and clocks.

// Called through a generic pointer that points to shared, local or global memory.
__device__ __noinline__ void bump(int* p, int v) { *p += v; }

__device__ __noinline__ unsigned spaces_of(const void* p) {
  return (__isGlobal(p) ? 1u : 0u) | (__isShared(p) ? 2u : 0u) | (__isLocal(p) ? 4u : 0u) |
         (__isConstant(p) ? 8u : 0u);
}

__constant__ int constant_value = 5;

extern "C" __global__ void generic_spaces(int* global_data, unsigned* out) {
  __shared__ int shared_data[64];
  volatile int local_data[4];
  const unsigned t = threadIdx.x;
  shared_data[t] = static_cast<int>(t) * 10;
  for (int k = 0; k < 4; ++k) local_data[k] = k;
  __syncthreads();
  bump(&shared_data[(t + 1) % blockDim.x], 1);
  __syncthreads();
  bump(&global_data[t], shared_data[t]);
  int* local_ptr = const_cast<int*>(&local_data[t % 4]);
  bump(local_ptr, 100);
  unsigned* o = out + 8 * t;
  o[0] = spaces_of(&global_data[t]);
  o[1] = spaces_of(&shared_data[t]);
  o[2] = spaces_of(local_ptr);
  o[3] = spaces_of(&constant_value);
  // Generic to shared and back: the same location.
  const size_t shared_address = __cvta_generic_to_shared(&shared_data[t]);
  const int* back = static_cast<const int*>(__cvta_shared_to_generic(shared_address));
  o[4] = back == &shared_data[t] ? 1u : 0u;
  o[5] = static_cast<unsigned>(shared_data[t]);
  o[6] = static_cast<unsigned>(local_data[t % 4]);
  o[7] = static_cast<unsigned>(constant_value);
}

// Every load and store cache hint; out[i] = a combination of the loads, and the hinted stores
// write four more arrays.
extern "C" __global__ void cache_hints(const int* in, int* out, int* s1, int* s2, int* s3, int* s4,
                                       int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int a = __ldg(&in[i]);
  const int b = __ldcg(&in[(i + 1) % n]);
  const int c = __ldca(&in[(i + 2) % n]);
  const int d = __ldcs(&in[(i + 3) % n]);
  const int e = __ldlu(&in[(i + 4) % n]);
  const int f = __ldcv(&in[(i + 5) % n]);
  const float4 v = __ldg(reinterpret_cast<const float4*>(in) + (i % (n / 4)));
  out[i] = a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + __float_as_int(v.y);
  __stwb(&s1[i], a ^ b);
  __stcg(&s2[i], c - d);
  __stcs(&s3[i], e * 3);
  __stwt(&s4[i], f + 1);
}

struct Node {
  int value;
  Node* next;
  __device__ Node(int v, Node* n) : value(v), next(n) {}
};

// The device heap: a per-thread malloc'ed array and a linked list built with new, summed and
// freed.
extern "C" __global__ void device_heap(const int* counts, long long* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int count = counts[i];
  int* values = static_cast<int*>(malloc(sizeof(int) * static_cast<size_t>(count)));
  if (values == nullptr) {
    out[i] = -1;
    return;
  }
  for (int k = 0; k < count; ++k) values[k] = k * i;
  Node* list = nullptr;
  for (int k = 0; k < count; ++k) list = new Node(values[k] + 1, list);
  long long sum = 0;
  while (list != nullptr) {
    Node* next = list->next;
    sum += list->value;
    delete list;
    list = next;
  }
  free(values);
  int* block = new int[8];
  for (int k = 0; k < 8; ++k) block[k] = k;
  sum += block[7];
  delete[] block;
  out[i] = sum;
}

// Clocks move forward; __nanosleep returns.
extern "C" __global__ void clocks(unsigned long long* out) {
  const long long c0 = clock64();
  unsigned long long g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  __nanosleep(1000);
  volatile int spin = 0;
  for (int k = 0; k < 1000; ++k) spin = spin + k;
  const long long c1 = clock64();
  unsigned long long g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  const unsigned t = threadIdx.x;
  out[2 * t] = c1 >= c0 ? 1 : 0;
  out[2 * t + 1] = g1 >= g0 ? 1 : 0;
}
