// Placeholder so the module library is never empty.
namespace orrery { int config_module_anchor = 0; }
