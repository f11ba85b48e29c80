// Devices in the default configuration: one simulated sm_90 (H100-like) device.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "swdriver_test.hpp"

namespace {

struct Attribute {
  int value;
  const char* name;
};

const std::vector<Attribute> kAttributes = {
#define SWCU_DEVICE_ATTRIBUTE(value, name) {value, #name},
#include "core/generated/device_attributes.inc"
#undef SWCU_DEVICE_ATTRIBUTE
};

int attribute(CUdevice_attribute a, CUdevice dev = 0) {
  int value = -12345;
  REQUIRE(swcu::test::api().cuDeviceGetAttribute(&value, a, dev) == CUDA_SUCCESS);
  return value;
}

}  // namespace

TEST_SUITE("devices") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the default configuration has one device") {
    int count = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetCount(&count));
    CHECK(count == 1);
    CUdevice dev = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGet(&dev, 0));
    CHECK(dev == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGet(&dev, -1), CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGet(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetCount(nullptr), CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "every CU_DEVICE_ATTRIBUTE in cuda.h has a value") {
    REQUIRE(kAttributes.size() > 140);
    for (const Attribute& a : kAttributes) {
      INFO(a.name);
      int value = -12345;
      SWCU_TEST_CHECK_RESULT(
          cu.cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(a.value), 0),
          CUDA_SUCCESS);
    }
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an unknown device attribute is CUDA_ERROR_INVALID_VALUE") {
    int value = 7;
    for (const int a : {0, static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX), 100000, -1}) {
      INFO(a);
      SWCU_TEST_CHECK_RESULT(
          cu.cuDeviceGetAttribute(&value, swcu::test::invalid_enum<CUdevice_attribute>(a), 0),
          CUDA_ERROR_INVALID_VALUE);
    }
    CHECK(value == 7);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetAttribute(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0),
                           CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "device attributes describe an sm_90 H100-like part") {
    const std::vector<std::pair<CUdevice_attribute, int>> expected = {
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152},
        {CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK, 49152},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 228 * 1024},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1980000},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 2619000},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 5120},
        {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
        {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
        {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1},
        {CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0},
        {CU_DEVICE_ATTRIBUTE_INTEGRATED, 0},
        {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1},
        {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1},
        {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0x1a},
        {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0},
        {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, CU_COMPUTEMODE_DEFAULT},
    };
    for (const auto& [a, value] : expected) {
      INFO(static_cast<int>(a));
      CHECK(attribute(a) == value);
    }
  }

  // What a device attribute advertises, a program may rely on: features the driver does not
  // implement (external semaphores, compressible memory, textures and surfaces, unified function
  // pointers) read 0, as on a device without them; those it does (stream memory operations with
  // 64-bit values, NOR and flushes, tensor maps and cp.async.bulk.tensor) read 1.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "device attributes advertise only what is implemented") {
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) == 1);  // multicast_test.cpp
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH) == 0);
    // "Device supports unified function pointers": cuLibraryGetUnifiedFunction finds none here.
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS) == 0);
    // CUDA arrays exist (array_test.cpp), with an H100's extents; every array extent reads
    // non-zero. Texture objects over linear and pitched memory, and tex2Dgather, with an H100's
    // limits (cudaDeviceProp::maxTexture1DLinear, maxTexture2DLinear, maxTexture2DGather).
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH) == 32768);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH) == 1 << 28);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH) == 131072);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT) == 65000);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH) == 2097120);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT) == 32);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH) == 131072);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT) == 65536);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS) == 2046);
    int limits = 0;
    for (const Attribute& a : kAttributes) {
      const std::string name = a.name;
      if ((name.find("MAXIMUM_TEXTURE") == std::string::npos &&
           name.find("MAXIMUM_SURFACE") == std::string::npos) ||
          name.find("LINEAR") != std::string::npos) {
        continue;
      }
      INFO(name);
      CHECK(attribute(static_cast<CUdevice_attribute>(a.value)) > 0);
      ++limits;
    }
    CHECK(limits >= 36);  // every array extent of cuda.h
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT) == 512);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT) == 512);
    // ... and what it does implement reads 1 (or the handle types it exports).
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES) ==
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);  // device and host NUMA pools (ipc_test)
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED) == 1);
  }

  // Observed on an H200, driver 580.159.04, 2026-11-27: the deprecated _V1 stream memory
  // operation attributes (92, 93, 94; cuda.h: "Deprecated, along with v1 MemOps API") read 0,
  // while cooperative launch (95) and the attributes that replaced them (122, 123) read 1.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the _V1 stream memory operation attributes read 0, as on an H200") {
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1) == 0);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) == 1);
    CHECK(attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR) == 1);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "cuDeviceGetName fits the name into the given length") {
    char name[256];
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetName(name, sizeof name, 0));
    const std::string full = name;
    CHECK(full.find("H100") != std::string::npos);
    char short_name[8];
    std::memset(short_name, 'x', sizeof short_name);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetName(short_name, sizeof short_name, 0));
    CHECK(std::string(short_name) == full.substr(0, 7));
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetName(name, 0, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetName(nullptr, 8, 0), CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a device has 80 GiB of memory by default") {
    size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceTotalMem_v2(&bytes, 0));
    CHECK(bytes == size_t{80} << 30);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a device's UUID is stable and the same in both ABIs") {
    CUuuid a{}, b{}, c{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetUuid_v1(&a, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetUuid_v2(&b, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetUuid_v2(&c, 0));
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    CHECK(std::memcmp(&b, &c, sizeof a) == 0);
    const CUuuid zero{};
    CHECK(std::memcmp(&a, &zero, sizeof a) != 0);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetUuid_v2(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the PCI bus id is 0000:1A:00.0 and honours the length") {
    char id[32];
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetPCIBusId(id, sizeof id, 0));
    CHECK(std::string(id) == "0000:1A:00.0");
    char short_id[5];
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetPCIBusId(short_id, sizeof short_id, 0));
    CHECK(std::string(short_id) == "0000");
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetPCIBusId(id, 0, 0), CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuDeviceGetByPCIBusId accepts any case, with or without domain") {
    for (const char* id :
         {"0000:1A:00.0", "0000:1a:00.0", "1a:00.0", "1A:0.0", "00000000:1A:00.0"}) {
      INFO(id);
      CUdevice dev = -1;
      SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetByPCIBusId(&dev, id), CUDA_SUCCESS);
      CHECK(dev == 0);
    }
    for (const char* id : {"0000:1B:00.0", "0001:1A:00.0", "0000:1A:01.0", "0000:1A:00.1", "", "1A",
                           "zz:00.0", "0000:1A:00", "0000:1A:00.0x"}) {
      INFO(id);
      CUdevice dev = -1;
      SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetByPCIBusId(&dev, id), CUDA_ERROR_INVALID_VALUE);
      CHECK(dev == -1);
    }
    CUdevice dev = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetByPCIBusId(&dev, nullptr), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetByPCIBusId(nullptr, "1a:00.0"), CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a device is not its own peer") {
    int can = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceCanAccessPeer(&can, 0, 0));
    CHECK(can == 0);
    int value = -1;
    SWCU_TEST_CHECK_RESULT(
        cu.cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 0),
        CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceCanAccessPeer(&can, 0, 1), CUDA_ERROR_INVALID_DEVICE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the deprecated capability queries agree with the attributes") {
    int major = 0, minor = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceComputeCapability(&major, &minor, 0));
    CHECK(major == 9);
    CHECK(minor == 0);
    CUdevprop prop{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetProperties(&prop, 0));
    CHECK(prop.maxThreadsPerBlock == attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
    CHECK(prop.sharedMemPerBlock == attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    CHECK(prop.SIMDWidth == attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE));
    CHECK(prop.clockRate == attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
    CHECK(prop.maxThreadsDim[2] == attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z));
    CHECK(prop.maxGridSize[0] == attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "every device query refuses an invalid device") {
    const CUdevice bad = 5;
    int i = 0;
    size_t bytes = 0;
    char text[32];
    CUuuid uuid{};
    CUdevprop prop{};
    CUcontext ctx = nullptr;
    unsigned flags = 0;
    constexpr CUresult kInvalid = CUDA_ERROR_INVALID_DEVICE;
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetName(text, sizeof text, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetUuid_v2(&uuid, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceTotalMem_v2(&bytes, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetAttribute(&i, CU_DEVICE_ATTRIBUTE_WARP_SIZE, bad),
                           kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetPCIBusId(text, sizeof text, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceComputeCapability(&i, &i, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetProperties(&prop, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceCanAccessPeer(&i, bad, 0), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxRetain(&ctx, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxRelease_v2(bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxGetState(bad, &flags, &i), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxSetFlags_v2(bad, 0), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuDevicePrimaryCtxReset_v2(bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, bad), kInvalid);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxCreate_v4(&ctx, nullptr, 0, -1), kInvalid);
  }
}
