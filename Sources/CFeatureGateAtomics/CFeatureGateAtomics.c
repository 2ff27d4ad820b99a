// Everything lives in include/CFeatureGateAtomics.h as `static inline` functions, so that Swift inlines them into
// its callers. SwiftPM needs one source file per C target; this is it.
#include "CFeatureGateAtomics.h"
