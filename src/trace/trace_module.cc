// Placeholder so the module library is never empty.
namespace orrery { int trace_module_anchor = 0; }
