// nevermiss bmv2/pna.p4: PNA as the BMv2 pna_nic target declares it, which
// is the specification's API from v0.7 on, whatever NEVERMISS_PNA_DIALECT
// says.

#ifndef __PNA_P4__
#define __PNA_P4__

#include "../core.p4"
#include "../nevermiss/pna-v07.p4"

#endif  // __PNA_P4__
