// nevermiss pna.p4: the Portable NIC Architecture, in the dialect the
// program is written for.
//
// Two incompatible PNA APIs are in use (docs/p4include.md, "PNA dialects"):
//   NEVERMISS_PNA_DIALECT == 3   the specification's API from v0.7 on:
//                                PNA_NIC(main_parser, main_control,
//                                main_deparser)  -> nevermiss/pna-v07.p4
//   otherwise (or undefined)     the older API of P4-DPDK and the P4
//                                community's test programs, with a
//                                PreControl block  -> nevermiss/pna-v06.p4
// The nevermiss driver defines NEVERMISS_PNA_DIALECT from a scan of the
// program; `-D NEVERMISS_PNA_DIALECT=3` forces the newer API.

#ifndef __PNA_P4__
#define __PNA_P4__

#include "core.p4"

#if defined(NEVERMISS_PNA_DIALECT) && NEVERMISS_PNA_DIALECT == 3
#include "nevermiss/pna-v07.p4"
#else
#include "nevermiss/pna-v06.p4"
#endif

#endif  // __PNA_P4__
