# Append to tests/sw_env_tests.cmake when peer_test.cpp moves to tests/sw/.
cuwrap_sw_env_test("with four devices the peer matrix is full and attributes are reported"
                   "SWCUDA_DEVICES=4")
cuwrap_sw_env_test("peer access is enabled once and disabled by the guard that enabled it"
                   "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("peer copies move data between devices" "SWCUDA_DEVICES=2")
cuwrap_sw_env_test("without a link peer access names both devices"
                   "SWCUDA_DEVICES=2;SWCUDA_P2P=0-1")
cuwrap_sw_env_test("fault sweep: enabling peer access and opening IPC memory" "SWCUDA_DEVICES=2")
