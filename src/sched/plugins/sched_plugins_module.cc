// Placeholder so the module library is never empty.
namespace orrery { int sched_plugins_module_anchor = 0; }
