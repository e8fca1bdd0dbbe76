// Placeholder so the module library is never empty.
namespace orrery { int analysis_module_anchor = 0; }
