// A shared library without swcu_register_kernels.
extern "C" __attribute__((visibility("default"))) int not_a_registration_function() { return 0; }
