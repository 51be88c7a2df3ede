// nevermiss bmv2/psa.p4: PSA as the BMv2 psa_switch target declares it.
// Identical to the main psa.p4, whose widths already are BMv2's.
#include "../psa.p4"
