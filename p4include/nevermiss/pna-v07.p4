// nevermiss: the PNA dialect of the specification from v0.7 on (three
// programmable blocks, no PreControl, no direction metadata, add_entry
// returning AddEntryErrorStatus_t, AUTO_DELETE idle timeout).
// Reached through <pna.p4> when NEVERMISS_PNA_DIALECT is 3, and always
// through <bmv2/pna.p4>.  See docs/p4include.md.

#ifndef NEVERMISS_PNA_V07_P4
#define NEVERMISS_PNA_V07_P4

#include "pna-common.p4"

// Value of the `pna_idle_timeout` table property.
enum PNA_IdleTimeout_t {
    NO_TIMEOUT,      // entries never age
    NOTIFY_CONTROL,  // the control plane is told about idle entries
    AUTO_DELETE      // idle entries are removed by the data plane, silently
}

// W: width of each count; S: index type.
@noWarn("unused")
extern Counter<W, S> {
    Counter(bit<32> n_counters, PNA_CounterType_t type);
    void count(in S index);
}

@noWarn("unused")
extern DirectCounter<W> {
    DirectCounter(PNA_CounterType_t type);
    void count();
}

extern Meter<S> {
    Meter(bit<32> n_meters, PNA_MeterType_t type);
    // Colour-aware when `color` is given, colour-blind otherwise.
    PNA_MeterColor_t execute(in S index, in PNA_MeterColor_t color);
    PNA_MeterColor_t execute(in S index);
}

extern DirectMeter {
    DirectMeter(PNA_MeterType_t type);
    PNA_MeterColor_t execute(in PNA_MeterColor_t color);
    PNA_MeterColor_t execute();
}

enum PNA_Source_t {
    FROM_HOST,
    FROM_NET
}

// ---------------------------------------------------------------------------
// Metadata exchanged between the blocks and the NIC.
// ---------------------------------------------------------------------------

struct pna_main_parser_input_metadata_t {
    bool              recirculated;  // true after recirculation
    PortId_t          input_port;
}

// Whether a port is a network port or a host-side (virtual) port.
extern bool is_host_port(in PortId_t p);
extern bool is_net_port(in PortId_t p);

struct pna_main_input_metadata_t {
    bool              recirculated;
    Timestamp_t       timestamp;
    ParserError_t     parser_error;
    ClassOfService_t  class_of_service;
    PortId_t          input_port;
}

struct pna_main_output_metadata_t {
    ClassOfService_t  class_of_service;
}

// ---------------------------------------------------------------------------
// Packet-path functions.  drop_packet and send_to_port are "forwarding
// functions": the last one executed decides the packet's fate.
// ---------------------------------------------------------------------------

extern void drop_packet();
extern void send_to_port(in PortId_t dest_port);
// Sends a copy to `mirror_session_id`; one copy per slot, the last call for a
// slot wins.
extern void mirror_packet(in MirrorSlotId_t mirror_slot_id,
                          in MirrorSessionId_t mirror_session_id);

// ---------------------------------------------------------------------------
// Tables with `add_on_miss = true`.
// ---------------------------------------------------------------------------

// Width chosen by the target (at least 1).  0 means success; any other value
// is a failure.
typedef bit<1> AddEntryErrorStatus_t;

const AddEntryErrorStatus_t ADD_ENTRY_SUCCESS = 0;
const AddEntryErrorStatus_t ADD_ENTRY_NOT_DONE = 1;

// Called from the default (miss) action: adds an entry whose key is the key
// that just missed, with action `action_name` (a hit action of the same
// table) and its arguments `action_params`.
extern AddEntryErrorStatus_t add_entry<T>(
    string action_name,
    in T action_params,
    in ExpireTimeProfileId_t expire_time_profile_id);

// As add_entry when `do_add_entry` is true; otherwise does nothing and
// returns ADD_ENTRY_NOT_DONE.
extern AddEntryErrorStatus_t add_entry_if<T>(
    in bool do_add_entry,
    string action_name,
    in T action_params,
    in ExpireTimeProfileId_t expire_time_profile_id);

extern FlowId_t allocate_flow_id();

// From a hit action of a table whose pna_idle_timeout is NOTIFY_CONTROL or
// AUTO_DELETE: give the matched entry a new expiry profile and restart its
// timer / only restart its timer.
extern void set_entry_expire_time(in ExpireTimeProfileId_t expire_time_profile_id);
extern void restart_expire_timer();

// Nothing when update_aging_info is false; otherwise
// set_entry_expire_time(expire_time_profile_id) when update_expire_time is
// true, else restart_expire_timer().
extern void update_expire_info(
    in bool update_aging_info,
    in bool update_expire_time,
    in ExpireTimeProfileId_t expire_time_profile_id);

// set_entry_expire_time(expire_time_profile_id) when `condition` is true.
extern void set_entry_expire_time_if(
    in bool condition,
    in ExpireTimeProfileId_t expire_time_profile_id);

// from_net_value when is_network_port is true, from_host_value otherwise.
@pure
extern T SelectByDirection<T>(
    in bool is_network_port,
    in T from_net_value,
    in T from_host_value);

// ---------------------------------------------------------------------------
// Programmable blocks and the package.
// ---------------------------------------------------------------------------

parser MainParserT<MH, MM>(
    packet_in pkt,
    out   MH main_hdr,
    inout MM main_user_meta,
    in    pna_main_parser_input_metadata_t istd);

control MainControlT<MH, MM>(
    inout MH main_hdr,
    inout MM main_user_meta,
    in    pna_main_input_metadata_t  istd,
    inout pna_main_output_metadata_t ostd);

control MainDeparserT<MH, MM>(
    packet_out pkt,
    inout MH main_hdr,
    in    MM main_user_meta,
    in    pna_main_output_metadata_t ostd);

package PNA_NIC<MH, MM>(
    MainParserT<MH, MM> main_parser,
    MainControlT<MH, MM> main_control,
    MainDeparserT<MH, MM> main_deparser);

#endif  // NEVERMISS_PNA_V07_P4
