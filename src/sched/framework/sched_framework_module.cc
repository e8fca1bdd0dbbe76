// Placeholder so the module library is never empty.
namespace orrery { int sched_framework_module_anchor = 0; }
