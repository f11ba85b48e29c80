// Kernels for device graph launch (CUDA programming guide, "Device Graph Launch"): they launch
// executable graphs from the device with cudaGraphLaunch into the device runtime's graph launch
// streams and read cudaGetCurrentGraphExec (cuda_device_runtime_api.h).

// status[0] = cudaGraphLaunch(graph, stream), by one thread.
extern "C" __global__ void try_launch(cudaGraphExec_t graph, cudaStream_t stream, int* status) {
  if (blockIdx.x == 0 && threadIdx.x == 0) status[0] = cudaGraphLaunch(graph, stream);
}

// Launches `first` then `second` (when not null) into `stream`, results in status[0..1].
extern "C" __global__ void launch_two(cudaGraphExec_t first, cudaGraphExec_t second,
                                      cudaStream_t stream, int* status) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    status[0] = cudaGraphLaunch(first, stream);
    if (second != nullptr) status[1] = cudaGraphLaunch(second, stream);
  }
}

// A scheduler: fire-and-forget launches `positive` when *value > 0, else `other`.
extern "C" __global__ void schedule(cudaGraphExec_t positive, cudaGraphExec_t other,
                                    const int* value, int* status) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    status[0] = cudaGraphLaunch(*value > 0 ? positive : other, cudaStreamGraphFireAndForget);
  }
}

// Launches graphs[0..count) into `stream`, one result each in status.
extern "C" __global__ void launch_all(const cudaGraphExec_t* graphs, int count, cudaStream_t stream,
                                      int* status) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (int i = 0; i < count; ++i) status[i] = cudaGraphLaunch(graphs[i], stream);
  }
}

// One iteration of a loop on the device: counts it, and while fewer than `limit` have run the
// graph tail-launches itself (cudaGetCurrentGraphExec); status[0] = the last launch's result,
// status[1] = a second self tail launch's result (only one may be pending).
extern "C" __global__ void relaunch_self(int* count, int limit, int* status) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const int done = ++*count;
    if (done < limit) {
      status[0] = cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
      status[1] = cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
    }
  }
}

// Appends `id` to log (log[0] counts the entries that follow it).
extern "C" __global__ void append(int* log, int id) {
  if (blockIdx.x == 0 && threadIdx.x == 0) log[1 + atomicAdd(log, 1)] = id;
}

// *out = cudaGetCurrentGraphExec().
extern "C" __global__ void current_graph(unsigned long long* out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *out = reinterpret_cast<unsigned long long>(cudaGetCurrentGraphExec());
  }
}

// data[i] = data[i] * factor + offset.
extern "C" __global__ void scale_add(float* data, float factor, float offset, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor + offset;
}
