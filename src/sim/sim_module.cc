// Placeholder so the module library is never empty.
namespace orrery { int sim_module_anchor = 0; }
