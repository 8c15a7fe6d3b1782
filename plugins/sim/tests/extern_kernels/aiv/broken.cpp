// Test kernel that does not compile.
extern "C" void kernel_entry(long* args) { undeclared_function(args); }
