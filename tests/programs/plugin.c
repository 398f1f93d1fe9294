/* A library that dlopen_each.c loads: its data starts afresh with each process. */
int plugin_value = 40;

int plugin_add(int x) { return plugin_value++ + x; }
