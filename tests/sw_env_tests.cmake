# sw tests that need a particular software-driver configuration (see sw/*_test.cpp, suite
# "sw_env"). cuwrap_sw_env_test(<test case name> <environment>).
cuwrap_sw_env_test("with SWCUDA_DEVICES=3 there are three distinct devices" "SWCUDA_DEVICES=3")
cuwrap_sw_env_test("with SWCUDA_DEVICES=0 the count is zero and get() says there is no device"
                   "SWCUDA_DEVICES=0")
cuwrap_sw_env_test("a malformed SWCUDA_FAULTS rule makes loading the driver fail"
                   "SWCUDA_FAULTS=cuMemAlloc:x:NOT_A_CODE")
cuwrap_sw_env_test("with SWCUDA_DRIVER_VERSION=12040 cuCtxCreate names both versions"
                   "SWCUDA_DRIVER_VERSION=12040")
cuwrap_sw_env_test("in deferred mode a stream is not done until it is synchronized"
                   "SWCUDA_EXEC=deferred")
cuwrap_sw_env_test("in deferred mode an event is done once its stream is synchronized"
                   "SWCUDA_EXEC=deferred")
cuwrap_sw_env_test("in deferred mode a stream-ordered buffer is freed when its stream gets there"
                   "SWCUDA_EXEC=deferred")
cuwrap_sw_env_test("in deferred mode a kept buffer lives until its stream runs"
                   "SWCUDA_EXEC=deferred")
cuwrap_sw_env_test("with two devices a pool can be shared with the peer" "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("with four devices the peer matrix is full and attributes are reported"
                   "SWCUDA_DEVICES=4")
cuwrap_sw_env_test("peer access is enabled once and disabled by the guard that enabled it"
                   "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("peer copies move data between devices" "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("without a link peer access names both devices"
                   "SWCUDA_DEVICES=2;SWCUDA_P2P=0-1")
cuwrap_sw_env_test("fault sweep: enabling peer access and opening IPC memory" "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("the first call through the process table loads the driver" "SWCUDA_DEVICES=1")
cuwrap_sw_env_test("first calls from many threads at once load the driver once" "SWCUDA_DEVICES=1")
cuwrap_sw_env_test("with two devices a buffer on device 1 exports as kDLCUDA 1" "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("multicast: a store through the multicast range reaches both devices"
                   "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("multicast: fault sweep over create and add and bind and map" "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("with SWCUDA_DRIVER_VERSION=12040 newer features are not supported"
                   "SWCUDA_DRIVER_VERSION=12040")
cuwrap_sw_env_test("with an NVTX injection library names and ranges reach the tool"
                   "NVTX_INJECTION64_PATH=$<TARGET_FILE:cuwrap_nvtx_recorder>")
