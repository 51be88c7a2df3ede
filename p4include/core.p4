// nevermiss core library: the declarations every P4_16 program may rely on.
//
// Written for nevermiss from the P4_16 language specification v1.2.4
// ("P4 core library" appendix and the sections on errors, packet_in,
// packet_out, verify, match_kind and static_assert).  See docs/p4include.md
// for the list of deliberate differences from the specification text.
//
// The include guard name matches the one other toolchains use, because some
// programs test it with #ifdef to find out whether the core library is there.

#ifndef _CORE_P4_
#define _CORE_P4_

// The predefined error codes (spec: "Error types").  Programs may add their
// own members with further `error { ... }` declarations.
error {
    NoError,               // the default value of every `error` variable
    PacketTooShort,        // extract or lookahead ran past the end of the packet
    NoMatch,               // no select case matched
    StackOutOfBounds,      // next/last/push/pop or an index left a stack's bounds
    HeaderTooShort,        // a varbit extract asked for more bits than the field holds
    ParserTimeout,         // the parser exceeded its time budget
    ParserInvalidArgument  // a parser operation got an argument the target cannot honour
}

// The packet as a parser sees it: a read cursor moving over the bytes.
// Only the architecture creates instances (one per packet_in parameter).
extern packet_in {
    // Copies the next sizeof(T) bits into `hdr`, makes it valid and moves
    // the cursor.  T is a fixed-size header (or a stack's next element).
    void extract<T>(out T hdr);
    // Same for a header with exactly one varbit field, whose length in bits
    // is given by the second argument.
    void extract<T>(out T variableSizeHeader,
                    in bit<32> variableFieldSizeInBits);
    // Reads the next sizeof(T) bits without moving the cursor.
    T lookahead<T>();
    // Moves the cursor forward without copying anything.
    void advance(in bit<32> sizeInBits);
    // Length of the whole packet in bytes (not every target can tell).
    bit<32> length();
}

// The packet as a deparser builds it: an append-only byte sink.
extern packet_out {
    // Appends `hdr` if it is a valid header; a struct, stack or union is
    // emitted member by member, skipping invalid headers.
    void emit<T>(in T hdr);
}

// Parser-only check: when `check` is false the parser moves to `reject`
// with the parser error set to `toSignal`.
extern void verify(in bool check, in error toSignal);

// The action that does nothing; the usual default action of a table.
@noWarn("unused")
action NoAction() {}

// The match kinds every architecture understands.  Architectures add more
// (range, optional, selector, ...) with their own match_kind declarations.
match_kind {
    exact,    // the key must equal the entry's value
    ternary,  // key & mask == value & mask; priorities break ties
    lpm       // longest matching prefix wins
}

// Evaluated by the compiler: when `check` is false, compilation stops with
// `message` (or a default message).  Returns `check`, so it can initialise a
// constant.
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  // _CORE_P4_
