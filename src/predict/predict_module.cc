// Placeholder so the module library is never empty.
namespace orrery { int predict_module_anchor = 0; }
