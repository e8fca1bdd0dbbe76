// Placeholder so the module library is never empty.
namespace orrery { int workload_module_anchor = 0; }
