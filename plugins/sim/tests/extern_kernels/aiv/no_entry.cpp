// Test kernel that forgets its entry point.
extern "C" void not_the_entry(long* args) { (void)args; }
