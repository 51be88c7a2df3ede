//! Model checks (loom) of the exact engines' hand-made concurrency primitives: every
//! interleaving (up to a preemption bound) of a few threads on a tiny index (the cuckoo hash's
//! buckets, the direct array's index words, the cells and the free lists).
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p nevermiss-tables --release --test loom`
//! (a normal `cargo test` compiles this file to nothing).
#![cfg(loom)]

use loom::thread;
use nevermiss_tables::loom_api::{DirectModel, HazardModel, Model, TimerModel};
use std::sync::Arc;

/// Runs `f` under loom. Every concurrent actor of a model is a spawned thread (loom explores
/// few interleavings of operations the main thread runs between spawn and join).
fn check(f: impl Fn() + Sync + Send + 'static) {
    check_long(1_000, f);
}

/// [`check`] for a model whose executions take up to `branches` scheduling points (filling
/// buckets before the threads start takes many).
fn check_long(branches: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.max_branches = branches;
    b.check(f);
}

/// Two threads add the same key at once: exactly one adds it, the other sees it; the entry
/// exists once with the winner's value.
#[test]
fn same_key_added_once() {
    check(|| {
        let m = Arc::new(Model::new(4, 2));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.insert(7, 1));
        let u = thread::spawn(move || m3.insert(7, 2));
        let theirs = t.join().unwrap();
        let mine = u.join().unwrap();
        assert_eq!(
            [mine, theirs].iter().filter(|r| **r == Some(true)).count(),
            1
        );
        assert_eq!(
            [mine, theirs].iter().filter(|r| **r == Some(false)).count(),
            1
        );
        let v = m.get(7).unwrap();
        assert_eq!(v, if mine == Some(true) { 2 } else { 1 });
        assert!(m.remove(7));
        assert_eq!(m.get(7), None);
    });
}

/// A reader looks a key up while a writer moves its entry between its two buckets (there and
/// back): the reader never misses it.
#[test]
fn lookup_never_misses_an_entry_being_moved() {
    check(|| {
        let m = Arc::new(Model::new(4, 3));
        assert_eq!(m.insert(5, 50), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.relocate(5));
            assert!(m2.relocate(5));
        });
        let u = thread::spawn(move || assert_eq!(m3.get(5), Some(50)));
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(5), Some(50));
    });
}

/// Adding a key while its entry is moved to its secondary bucket finds it there: no duplicate
/// (the one-lock fast path of an insert trusts the primary bucket's overflow count).
#[test]
fn add_during_move_sees_the_moved_entry() {
    check(|| {
        let m = Arc::new(Model::new(4, 3));
        assert_eq!(m.insert(5, 50), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || assert!(m2.relocate(5)));
        let u = thread::spawn(move || assert_eq!(m3.insert(5, 51), Some(false)));
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(5), Some(50));
        assert!(m.remove(5));
        assert_eq!(m.get(5), None);
    });
}

/// Keys of a 2-bucket model: `n` keys whose primary bucket is 0, then one key whose primary
/// bucket is 0 and whose secondary bucket is 1.
fn primary_zero(m: &Model, n: usize) -> (Vec<u64>, u64) {
    let mut keys = (100..).filter(|&k| m.buckets(k).0 == 0);
    let fill: Vec<u64> = keys.by_ref().take(n).collect();
    let k = keys
        .find(|&k| m.buckets(k).1 == 1)
        .expect("a key with two buckets");
    (fill, k)
}

/// Two threads add the same key while its primary bucket is full (the insert that locks the
/// secondary bucket with a try-lock while it holds the primary): one adds it, the other sees
/// it, the entry exists once, in the secondary bucket, with the winner's value.
#[test]
fn same_key_added_once_into_the_secondary_bucket() {
    check(|| {
        let m = Arc::new(Model::new(10, 2));
        let (fill, k) = primary_zero(&m, 7);
        for &f in &fill {
            assert_eq!(m.insert(f, f), Some(true));
        }
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.insert(k, 1));
        let u = thread::spawn(move || m3.insert(k, 2));
        let theirs = t.join().unwrap();
        let mine = u.join().unwrap();
        let added = [mine, theirs].iter().filter(|r| **r == Some(true)).count();
        assert_eq!((added, [mine, theirs].contains(&Some(false))), (1, true));
        assert_eq!(m.get(k), Some(if mine == Some(true) { 2 } else { 1 }));
        assert!(m.remove(k));
        assert_eq!(m.get(k), None);
        for &f in &fill {
            assert_eq!(m.get(f), Some(f));
        }
    });
}

/// A key whose primary bucket is full goes into the last free way of its secondary bucket
/// while a key whose primary that bucket is adds itself there: the secondary bucket's lock
/// (taken with a try-lock by the first) keeps them from taking the same way; each add that
/// reports `Added` is found afterwards, and both buckets full makes the other report `Full`.
#[test]
fn adds_into_one_bucket_from_both_sides_take_different_ways() {
    check_long(200_000, || {
        let m = Arc::new(Model::new(16, 2));
        let (fill, k) = primary_zero(&m, 7);
        let mut ones = (100..).filter(|&x| m.buckets(x).0 == 1 && m.buckets(x).1 == 0);
        let other: Vec<u64> = ones.by_ref().take(7).collect();
        for &f in fill.iter().chain(&other[..6]) {
            assert_eq!(m.insert(f, f), Some(true));
        }
        let k1 = other[6];
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.insert(k, 1));
        let u = thread::spawn(move || m3.insert(k1, 2));
        let a = t.join().unwrap();
        let b = u.join().unwrap();
        assert!(
            matches!((a, b), (Some(true), None) | (None, Some(true))),
            "{a:?} {b:?}"
        );
        assert_eq!(m.get(k), a.map(|_| 1));
        assert_eq!(m.get(k1), b.map(|_| 2));
    });
}

/// A key that overflowed into its secondary bucket is added again while a delete frees a way
/// of its primary bucket (so the primary has room and an overflowed entry): the add finds the
/// entry (never a duplicate in the primary), and a reader never misses it.
#[test]
fn add_of_an_overflowed_key_finds_it_while_its_primary_gets_room() {
    check(|| {
        let m = Arc::new(Model::new(10, 2));
        let (fill, k) = primary_zero(&m, 7);
        for &f in &fill {
            assert_eq!(m.insert(f, f), Some(true));
        }
        assert_eq!(m.insert(k, 1), Some(true));
        let (m2, m3, m4) = (m.clone(), m.clone(), m.clone());
        let f0 = fill[0];
        let t = thread::spawn(move || assert!(m2.remove(f0)));
        let u = thread::spawn(move || assert_eq!(m3.insert(k, 2), Some(false)));
        let r = thread::spawn(move || assert_eq!(m4.get(k), Some(1)));
        t.join().unwrap();
        u.join().unwrap();
        r.join().unwrap();
        assert_eq!(m.get(k), Some(1));
        assert!(m.remove(k));
        assert_eq!(m.get(k), None);
    });
}

/// A key that overflowed into its secondary bucket is added again once its primary has room
/// (the inline insert, which reads the secondary bucket's ways without that bucket's lock),
/// while a key whose primary is that secondary bucket is added into it: the add finds the
/// overflowed entry (never a duplicate in the primary), and the other add lands.
#[test]
fn re_add_of_an_overflowed_key_reads_its_secondary_while_it_changes() {
    check(|| {
        let m = Arc::new(Model::new(10, 2));
        let (fill, over) = primary_zero(&m, 7);
        let j = (100..)
            .find(|&x| m.buckets(x).0 == 1)
            .expect("a key whose primary is bucket 1");
        for &f in &fill {
            assert_eq!(m.insert(f, f), Some(true));
        }
        assert_eq!(m.insert(over, 7), Some(true));
        assert!(m.remove(fill[0]));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || assert_eq!(m2.insert(over, 9), Some(false)));
        let u = thread::spawn(move || assert_eq!(m3.insert(j, 5), Some(true)));
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(over), Some(7));
        assert_eq!(m.get(j), Some(5));
        assert!(m.remove(over));
        assert_eq!(m.get(over), None);
    });
}

/// A reader of key 1 while the writer deletes it and adds key 2, which reuses the slot at once:
/// the reader sees key 1's value or nothing, never key 2's value.
#[test]
fn slot_reuse_is_never_seen_through_a_stale_bucket_word() {
    check(|| {
        let m = Arc::new(Model::new(1, 2));
        assert_eq!(m.insert(1, 10), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.remove(1));
            assert_eq!(m2.insert(2, 20), Some(true));
        });
        let u = thread::spawn(move || {
            let v = m3.get(1);
            assert!(v == Some(10) || v.is_none(), "{v:?}");
        });
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(1), None);
        assert_eq!(m.get(2), Some(20));
    });
}

/// A reader during an in-place modify sees the old or the new value, never a torn mix and
/// never a miss.
#[test]
fn modify_is_atomic_for_readers() {
    check(|| {
        let m = Arc::new(Model::new(2, 2));
        assert_eq!(m.insert(3, 1), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || assert!(m2.modify(3, 2)));
        let u = thread::spawn(move || {
            let v = m3.get(3);
            assert!(v == Some(1) || v == Some(2), "{v:?}");
        });
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(3), Some(2));
    });
}

/// The same key added by two threads through the one-line cell init (the add-on-miss fast
/// path): one adds it, the other sees it, and a one-line reader gets the winner's value.
#[test]
fn same_key_added_once_through_line_cells() {
    check(|| {
        let m = Arc::new(Model::new(4, 2));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.insert_line(7, 1));
        let u = thread::spawn(move || m3.insert_line(7, 2));
        let theirs = t.join().unwrap();
        let mine = u.join().unwrap();
        let mut r = [mine, theirs];
        r.sort();
        assert_eq!(r, [Some(false), Some(true)]);
        let v = m.get_line(7).unwrap();
        assert_eq!(v, if mine == Some(true) { 2 } else { 1 });
    });
}

/// A one-line reader during an in-place modify sees the old or the new value, never a torn mix
/// and never a miss.
#[test]
fn modify_is_atomic_for_line_readers() {
    check(|| {
        let m = Arc::new(Model::new(2, 2));
        assert_eq!(m.insert_line(3, 1), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || assert!(m2.modify(3, 2)));
        let u = thread::spawn(move || {
            let v = m3.get_line(3);
            assert!(v == Some(1) || v == Some(2), "{v:?}");
        });
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get_line(3), Some(2));
    });
}

/// A one-line reader of key 1 while the writer deletes it and adds key 2 through the one-line
/// init, which reuses the slot at once: key 1's value or nothing, never key 2's.
#[test]
fn line_slot_reuse_is_never_seen_through_a_stale_bucket_word() {
    check(|| {
        let m = Arc::new(Model::new(1, 2));
        assert_eq!(m.insert_line(1, 10), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.remove(1));
            assert_eq!(m2.insert_line(2, 20), Some(true));
        });
        let u = thread::spawn(move || {
            let v = m3.get_line(1);
            assert!(v == Some(10) || v.is_none(), "{v:?}");
        });
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get_line(1), None);
        assert_eq!(m.get_line(2), Some(20));
    });
}

/// A one-line reader never misses an entry being moved between its buckets.
#[test]
fn line_lookup_never_misses_an_entry_being_moved() {
    check(|| {
        let m = Arc::new(Model::new(4, 3));
        assert_eq!(m.insert_line(5, 50), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.relocate(5));
            assert!(m2.relocate(5));
        });
        let u = thread::spawn(move || assert_eq!(m3.get_line(5), Some(50)));
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get_line(5), Some(50));
    });
}

/// Direct array: two threads add the same key at once (inline insert, then the whole one):
/// exactly one adds it, the other sees it; a reader gets the winner's value.
#[test]
fn direct_same_key_added_once() {
    check(|| {
        let m = Arc::new(DirectModel::new(8, 4));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.insert(7, 1));
        let u = thread::spawn(move || m3.insert(7, 2));
        let theirs = t.join().unwrap();
        let mine = u.join().unwrap();
        let mut r = [mine, theirs];
        r.sort();
        assert_eq!(r, [Some(false), Some(true)]);
        assert_eq!(m.get(7), Some(if mine == Some(true) { 2 } else { 1 }));
        assert!(m.remove(7));
        assert_eq!(m.get(7), None);
    });
}

/// Direct array: a reader during an add of its key sees nothing or the whole new entry.
#[test]
fn direct_lookup_during_add_sees_nothing_or_all() {
    check(|| {
        let m = Arc::new(DirectModel::new(8, 2));
        let m2 = m.clone();
        let t = thread::spawn(move || assert_eq!(m2.insert(3, 30), Some(true)));
        let u = thread::spawn(move || {
            let v = m.get(3);
            assert!(v.is_none() || v == Some(30), "{v:?}");
        });
        t.join().unwrap();
        u.join().unwrap();
    });
}

/// Direct array: a reader of key 1 while the writer deletes it and adds key 2, which reuses
/// the slot at once: key 1's value or nothing, never key 2's (the generation check).
#[test]
fn direct_slot_reuse_is_never_seen_through_a_stale_word() {
    check(|| {
        let m = Arc::new(DirectModel::new(4, 1));
        assert_eq!(m.insert(1, 10), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.remove(1));
            assert_eq!(m2.insert(2, 20), Some(true));
        });
        let u = thread::spawn(move || {
            let v = m3.get(1);
            assert!(v == Some(10) || v.is_none(), "{v:?}");
        });
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(1), None);
        assert_eq!(m.get(2), Some(20));
    });
}

/// Direct array: a reader looks key 1 up twice while the writer deletes it and adds it again
/// (in the same slot, the only one): the reader's two results follow the history — the old
/// value, then nothing, then the new value — never the new value and then nothing (an entry
/// seen before its word is published).
#[test]
fn direct_delete_and_readd_are_seen_in_order() {
    check(|| {
        let m = Arc::new(DirectModel::new(4, 1));
        assert_eq!(m.insert(1, 10), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.remove(1));
            assert_eq!(m2.insert(1, 11), Some(true));
        });
        let u = thread::spawn(move || {
            let order = |v: Option<u64>| match v {
                Some(10) => 0,
                None => 1,
                Some(11) => 2,
                other => panic!("{other:?}"),
            };
            let a = order(m3.get(1));
            let b = order(m3.get(1));
            assert!(a <= b, "saw {a} then {b}");
        });
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(1), Some(11));
    });
}

/// Direct array: a reader during an in-place modify sees the old or the new value, never a
/// torn mix and never a miss.
#[test]
fn direct_modify_is_atomic_for_readers() {
    check(|| {
        let m = Arc::new(DirectModel::new(4, 2));
        assert_eq!(m.insert(3, 1), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || assert!(m2.modify(3, 2)));
        let u = thread::spawn(move || {
            let v = m3.get(3);
            assert!(v == Some(1) || v == Some(2), "{v:?}");
        });
        t.join().unwrap();
        u.join().unwrap();
        assert_eq!(m.get(3), Some(2));
    });
}

/// Direct array: a delete and an add of the same present key race: the add sees the old entry
/// (then the delete removes it) or adds after the delete; never both entries, never a lost
/// one.
#[test]
fn direct_add_and_delete_of_one_key_are_serialized() {
    check(|| {
        let m = Arc::new(DirectModel::new(4, 2));
        assert_eq!(m.insert(3, 1), Some(true));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.remove(3));
        let u = thread::spawn(move || m3.insert(3, 2));
        let removed = t.join().unwrap();
        let added = u.join().unwrap();
        assert!(removed, "the key was present");
        match added {
            Some(true) => assert_eq!(m.get(3), Some(2)),
            Some(false) => assert_eq!(m.get(3), None),
            None => panic!("full"),
        }
        // Both slots are free or in use as the outcome says.
        let want = if added == Some(true) { 1 } else { 2 };
        let mut n = 0;
        for k in [0u8, 1, 2] {
            if m.insert(k, 5) == Some(true) {
                n += 1;
            }
        }
        assert_eq!(n, want, "a slot was lost or handed out twice");
    });
}

/// The free list: concurrent allocations and a free never hand out one slot twice.
#[test]
fn free_list_hands_out_each_slot_once() {
    check(|| {
        let m = Arc::new(Model::new(2, 2));
        let a = m.alloc().unwrap();
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.alloc());
        let u = thread::spawn(move || {
            m3.free(a);
            m3.alloc()
        });
        let theirs = t.join().unwrap();
        let mine = u.join().unwrap();
        let got: Vec<u32> = [mine, theirs].into_iter().flatten().collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_ne!(got[0], got[1]);
        assert_eq!(m.alloc(), None);
    });
}

/// The free list's ABA case: while one thread pops, another pops both slots and pushes the
/// first one back; the first thread's pop must not resurrect the second slot.
#[test]
fn free_list_survives_aba() {
    check(|| {
        let m = Arc::new(Model::new(2, 2));
        let (a, b) = (m.alloc().unwrap(), m.alloc().unwrap());
        m.free(b);
        m.free(a);
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.alloc());
        let u = thread::spawn(move || {
            let x = m3.alloc();
            let y = m3.alloc();
            if let Some(x) = x {
                m3.free(x);
            }
            y
        });
        let mut live: Vec<u32> = [t.join().unwrap(), u.join().unwrap()]
            .into_iter()
            .flatten()
            .collect();
        while let Some(s) = m.alloc() {
            live.push(s);
        }
        live.sort();
        assert_eq!(live, vec![0, 1], "a slot was handed out twice or lost");
    });
}

/// Striped free lists: a thread of stripe 0 takes the fresh chunk (its rest goes to list 0)
/// while a thread of stripe 1 takes, frees and retakes a slot (it must steal from list 0 or get
/// the chunk first): no slot is handed out twice or stranded.
#[test]
fn striped_free_lists_hand_out_each_slot_once() {
    check(|| {
        let m = Arc::new(Model::new(3, 2));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || [m2.alloc_in(0), m2.alloc_in(0)]);
        let u = thread::spawn(move || {
            if let Some(a) = m3.alloc_in(1) {
                m3.free_in(1, a);
            }
            m3.alloc_in(1)
        });
        let mut live: Vec<u32> = t.join().unwrap().into_iter().flatten().collect();
        live.extend(u.join().unwrap());
        while let Some(s) = m.alloc_in(2) {
            live.push(s);
        }
        live.sort();
        assert_eq!(live, vec![0, 1, 2], "a slot was handed out twice or lost");
    });
}

/// Direct array, every slot in use: key 1's entry is replaced (as an expired AUTO_DELETE entry
/// is) while another thread writes through the old entry's handle and then reads key 1. The
/// replacement never finds the array full (it rewrites its own slot), the reader sees the old
/// entry (written or not), nothing, or the new one, never torn, and the write through the stale
/// handle never lands in the new entry. (Fails without the in-place replacement: a replacement
/// that takes a second slot before freeing its own finds none.)
#[test]
fn direct_replacement_in_a_full_array_reuses_its_slot() {
    check(|| {
        let m = Arc::new(DirectModel::new(4, 2));
        assert_eq!(m.insert(1, 10), Some(true));
        assert_eq!(m.insert(2, 20), Some(true));
        let old = m.handle(1).unwrap();
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.replace(1, 11));
        let u = thread::spawn(move || {
            let wrote = m3.update(old, 99);
            let v = m3.get(1);
            assert!(
                v == Some(11) || v.is_none() || v == Some(if wrote { 99 } else { 10 }),
                "wrote {wrote}, then saw {v:?}"
            );
        });
        assert_eq!(
            t.join().unwrap(),
            Some(true),
            "replacement found the array full"
        );
        u.join().unwrap();
        assert_eq!(m.get(1), Some(11));
        assert_eq!(m.get(2), Some(20));
        let new = m.handle(1).unwrap();
        assert_eq!(new.0, old.0, "the replacement took another slot");
        assert_ne!(new.1, old.1);
        assert!(!m.update(old, 5));
        assert_eq!(m.get(1), Some(11));
    });
}

/// The cuckoo hash, every slot in use: the same as
/// [`direct_replacement_in_a_full_array_reuses_its_slot`] through the bucket's way word.
#[test]
fn replacement_in_a_full_index_reuses_its_slot() {
    check(|| {
        let m = Arc::new(Model::new(2, 1));
        assert_eq!(m.insert(1, 10), Some(true));
        assert_eq!(m.insert(2, 20), Some(true));
        let old = m.handle(1).unwrap();
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.replace(1, 11));
        let u = thread::spawn(move || {
            let wrote = m3.update(old, 99);
            let v = m3.get(1);
            assert!(
                v == Some(11) || v.is_none() || v == Some(if wrote { 99 } else { 10 }),
                "wrote {wrote}, then saw {v:?}"
            );
        });
        assert_eq!(
            t.join().unwrap(),
            Some(true),
            "replacement found the index full"
        );
        u.join().unwrap();
        assert_eq!(m.get(1), Some(11));
        assert_eq!(m.get(2), Some(20));
        let new = m.handle(1).unwrap();
        assert_eq!(new.0, old.0, "the replacement took another slot");
        assert_ne!(new.1, old.1);
        assert!(!m.update(old, 5));
        assert_eq!(m.get(1), Some(11));
    });
}

/// A free in flight: the only slot's entry is being removed (its free announced, as a removal
/// announces it before killing the entry) while a thread of another stripe allocates. The
/// allocation waits for the slot instead of reporting the table full; with the slot taken, a
/// further allocation reports it. (Fails without the wait.)
#[test]
fn allocation_waits_for_a_free_in_flight() {
    check(|| {
        let m = Arc::new(Model::new(1, 1));
        let a = m.alloc_in(0).unwrap();
        m.freeing();
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.freed_in(1, a));
        let u = thread::spawn(move || m3.alloc_in(2));
        t.join().unwrap();
        assert_eq!(
            u.join().unwrap(),
            Some(a),
            "full while a free was in flight"
        );
        assert_eq!(m.alloc_in(0), None);
    });
}

/// A chunk of never-used slots in flight: a thread of stripe 0 takes the only chunk (keeps one
/// slot, pushes the other onto its list) while a thread of stripe 1 allocates: it gets the
/// other slot, waiting for the push if it comes after the chunk was taken, instead of
/// reporting the table full. (Fails without the count of pushed slots.)
#[test]
fn allocation_waits_for_a_fresh_chunk_in_flight() {
    check(|| {
        let m = Arc::new(Model::new(2, 1));
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.alloc_in(0));
        let u = thread::spawn(move || m3.alloc_in(1));
        let mut got = [t.join().unwrap(), u.join().unwrap()];
        got.sort();
        assert_eq!(got, [Some(0), Some(1)], "full while a chunk was in flight");
        assert_eq!(m.alloc_in(2), None);
    });
}

/// The quiescence gate (DATAPLANE_ATOMIC): a worker runs a batch that reads two values while
/// the control plane closes the gate, writes both and opens it. The batch sees both old or
/// both new values, never one of each; and the writer never writes while the worker is inside.
#[test]
fn gate_batch_sees_all_or_nothing() {
    use loom::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use nevermiss_tables::Gate;
    check(|| {
        let gate = Arc::new(Gate::new(2));
        let vals = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let (g2, v2) = (gate.clone(), vals.clone());
        let w = thread::spawn(move || {
            let t = g2.register();
            g2.enter(&t);
            let a = v2[0].load(Relaxed);
            let b = v2[1].load(Relaxed);
            g2.leave(&t);
            g2.unregister(t);
            (a, b)
        });
        let (g3, v3) = (gate.clone(), vals.clone());
        let c = thread::spawn(move || {
            let closed = g3
                .close(std::time::Duration::from_secs(3600))
                .expect("closes");
            v3[0].store(1, Relaxed);
            v3[1].store(1, Relaxed);
            drop(closed);
        });
        let (a, b) = w.join().unwrap();
        c.join().unwrap();
        assert_eq!(a, b, "a batch saw part of a closed-gate update");
    });
}

/// The same with the worker on the shared slot 0 (the own slots are taken), which counts
/// entries with read-modify-writes instead of flagging them.
#[test]
fn gate_shared_slot_is_counted() {
    use loom::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use nevermiss_tables::Gate;
    check(|| {
        let gate = Arc::new(Gate::new(2));
        let taken = gate.register();
        let vals = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let (g2, v2) = (gate.clone(), vals.clone());
        let w = thread::spawn(move || {
            let t = g2.register();
            g2.enter(&t);
            let a = v2[0].load(Relaxed);
            let b = v2[1].load(Relaxed);
            g2.leave(&t);
            (a, b)
        });
        let (g3, v3) = (gate.clone(), vals.clone());
        let c = thread::spawn(move || {
            let closed = g3
                .close(std::time::Duration::from_secs(3600))
                .expect("closes");
            v3[0].store(1, Relaxed);
            v3[1].store(1, Relaxed);
            drop(closed);
        });
        let (a, b) = w.join().unwrap();
        c.join().unwrap();
        assert_eq!(a, b, "a batch saw part of a closed-gate update");
        gate.unregister(taken);
    });
}

/// A lock-free update through a handle whose entry is killed and its slot reused meanwhile
/// never lands in the new entry: the kill's wait for hazard words either sees the updater's
/// (and waits for its store, which the reuse then overwrites) or the updater sees the kill.
#[test]
fn lock_free_update_never_lands_in_a_reused_slot() {
    check(|| {
        let (m, gen) = HazardModel::new(10);
        let m = Arc::new(m);
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.kill(gen));
            m2.init(20)
        });
        let u = thread::spawn(move || m3.update(1, gen, 0, 11));
        let new_gen = t.join().unwrap();
        // Landed before the kill, refused (stale), or sent to the lock: all fine; what matters
        // is the reused slot.
        let _ = u.join().unwrap();
        assert_ne!(new_gen, gen);
        assert_eq!(m.read(), (1, 20, 0), "the reused slot holds its own value");
    });
}

/// A lock-free update racing a control-plane modify to another action: the result is the
/// modify's value (the update ordered before it, or refused by its version), never the
/// update's value under the new action.
#[test]
fn lock_free_update_is_ordered_before_a_modify() {
    check(|| {
        let (m, gen) = HazardModel::new(10);
        let m = Arc::new(m);
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || m2.modify(2, 30));
        let u = thread::spawn(move || m3.update(1, gen, 0, 11));
        t.join().unwrap();
        let _ = u.join().unwrap();
        assert_eq!(m.read(), (2, 30, 1));
    });
}

/// Two lock-free updaters of one entry (hazard words 1 and 2) and a reader: the reader sees
/// one of the three values whole; the entry ends with one of the updates.
#[test]
fn lock_free_updates_are_atomic_for_readers() {
    check(|| {
        let (m, gen) = HazardModel::new(10);
        let m = Arc::new(m);
        let (m2, m3, m4) = (m.clone(), m.clone(), m.clone());
        let t = thread::spawn(move || assert_eq!(m2.update(1, gen, 0, 11), Some(true)));
        let u = thread::spawn(move || assert_eq!(m3.update(2, gen, 0, 12), Some(true)));
        let r = thread::spawn(move || {
            let (a, v, _) = m4.read();
            assert!(a == 1 && [10, 11, 12].contains(&v), "{a} {v}");
        });
        t.join().unwrap();
        u.join().unwrap();
        r.join().unwrap();
        let (a, v, ver) = m.read();
        assert!(a == 1 && (v == 11 || v == 12) && ver == 0, "{a} {v} {ver}");
    });
}

/// A lock-free timer restart through a handle whose entry a batch removal retires meanwhile
/// (an expiry sweep: free announced, entry killed, slot retired), after which the batch
/// drains the limbo and the slot is reused by a new entry: the restart's deadline never lands
/// in the new entry. The drain's hazard wait either sees the restart's hazard word and waits
/// for its store, or the restart sees the kill. (Fails with the drain's wait removed.)
#[test]
fn lock_free_restart_never_lands_in_a_slot_reused_after_a_drain() {
    check(|| {
        let (m, gen) = TimerModel::new(100);
        let m = Arc::new(m);
        let (m2, m3) = (m.clone(), m.clone());
        let t = thread::spawn(move || {
            assert!(m2.retire(gen));
            assert_eq!(m2.drain(), 1);
            assert_eq!(m2.alloc_in(1), Some(0));
            m2.init(300)
        });
        let u = thread::spawn(move || m3.restart(1, gen, 999));
        let new_gen = t.join().unwrap();
        let _ = u.join().unwrap();
        assert_ne!(new_gen, gen);
        assert_eq!(m.deadline(), 300, "the reused slot keeps its own deadline");
    });
}

/// An allocation that finds the table full while a retired slot waits in the limbo (its free
/// announced, nobody draining: the batch that retired it is blocked on an index lock the
/// allocating insert holds) drains the limbo itself and gets the slot, instead of waiting for
/// the batch forever. (Never returns with the allocation's drain removed.)
#[test]
fn allocation_drains_the_limbo_itself() {
    check(|| {
        let (m, gen) = TimerModel::new(100);
        assert!(m.retire(gen));
        let m = Arc::new(m);
        let m2 = m.clone();
        let a = thread::spawn(move || m2.alloc_in(1));
        assert_eq!(a.join().unwrap(), Some(0));
        assert_eq!(m.alloc_in(0), None, "one slot, taken");
    });
}

/// A lock-free timer restart racing the wheel's sweep of its entry (the Dekker pair of
/// `Table::restart_unlocked` and `Table::expire`): the restart stores a later deadline then
/// reads the schedule; the sweep marks the entry out of the wheel, fences, then reads the
/// deadline. Either the sweep sees the new deadline and keeps the entry in the wheel, or the
/// restart sees it out of the wheel and links it: the timer is never lost. (Fails with either
/// fence removed.)
#[test]
fn lock_free_restart_racing_a_sweep_keeps_the_timer() {
    check(|| {
        let (m, gen) = TimerModel::new(100);
        let m = Arc::new(m);
        let (m2, m3) = (m.clone(), m.clone());
        let s = thread::spawn(move || m2.sweep(150));
        let r = thread::spawn(move || m3.restart(1, gen, 400));
        let kept = s.join().unwrap();
        let linked = r.join().unwrap() == Some(Some(true));
        assert!(
            kept || linked,
            "the entry left the wheel with a deadline ahead"
        );
    });
}
