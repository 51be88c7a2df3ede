//! Table entries and default actions (P4Runtime §9.1 "TableEntry"): insert, modify, delete
//! and read, with their keys checked, parameters packed, metadata, idle timeouts, and direct
//! counters and meters carried along.

use super::*;

impl Switch {
    /// The expire profile of a control-plane idle timeout in table `rt` (allocated from 255
    /// down, after the profiles the program's `add_entry` calls use).
    pub(super) fn ttl_profile(
        &self,
        td: &p4_ir::Table,
        rt: &RtTable,
        ttl: u64,
    ) -> ControlResult<u8> {
        let ttl = if ttl == 0 { NEVER_NS } else { ttl };
        let mut m = rt.meta().ttl_profiles();
        if let Some(&p) = m.get(&ttl) {
            return Ok(p);
        }
        let used = rt.table().profiles().len();
        let taken: Vec<u8> = m.values().copied().collect();
        let Some(p) = (used..256)
            .rev()
            .map(|p| p as u8)
            .find(|p| !taken.contains(p))
        else {
            return Err(ControlError::ResourceExhausted(format!(
                "table {}: too many distinct idle timeouts",
                td.name
            )));
        };
        rt.table().set_profile(p, ttl);
        m.insert(ttl, p);
        Ok(p)
    }

    pub(super) fn check_resources(&self, td: &p4_ir::Table, e: &TableEntry) -> ControlResult<()> {
        if e.idle_timeout_ns > 0 && td.idle_timeout == p4_ir::IdleTimeout::None {
            return Err(invalid(format!(
                "table {} has no idle timeout; idle_timeout_ns must be 0",
                td.name
            )));
        }
        if e.counter.is_some() && td.direct_counter.is_none() {
            return Err(invalid(format!("table {} has no direct counter", td.name)));
        }
        if (e.meter.is_some() || e.meter_counters.is_some()) && td.direct_meter.is_none() {
            return Err(invalid(format!("table {} has no direct meter", td.name)));
        }
        Ok(())
    }

    /// The action data of an entry's action for table `t` (checks references exist).
    pub(super) fn entry_data(
        &self,
        td: &p4_ir::Table,
        rt: &RtTable,
        a: &EntryAction,
    ) -> ControlResult<ActionData> {
        match (a, rt.indirect()) {
            (EntryAction::Call(c), None) => self.pack_call(td, c, true),
            (EntryAction::Member(m), Some(x)) => {
                let p = self.profile(x)?;
                if !p.read().members.contains_key(m) {
                    return Err(ControlError::NotFound(format!("member {m} does not exist")));
                }
                Ok(reference(ACTION_MEMBER, *m))
            }
            (EntryAction::Group(g), Some(x)) => {
                let p = self.profile(x)?;
                if !p.selector {
                    return Err(invalid(format!(
                        "table {}: its action profile has no groups (not a selector)",
                        td.name
                    )));
                }
                if !p.read().groups.contains_key(g) {
                    return Err(ControlError::NotFound(format!("group {g} does not exist")));
                }
                Ok(reference(ACTION_GROUP, *g))
            }
            // Checked and stored by `store_data`.
            (EntryAction::ActionSet(_), Some(_)) => Ok(reference(ACTION_ONESHOT, 0)),
            (EntryAction::Call(_), Some(_)) => Err(invalid(format!(
                "table {} is indirect: entries name a member or group",
                td.name
            ))),
            (_, None) => Err(invalid(format!(
                "table {} is direct: entries name an action",
                td.name
            ))),
        }
    }

    /// The hidden one-shot set of `set` for selector `x` used by table `td` (checked: the
    /// profile is a selector programmed with one-shot sets only, weights ≥ 1, actions of the
    /// table, at most the profile's size of actions in all its sets).
    pub(super) fn oneshot_of(
        &self,
        td: &p4_ir::Table,
        x: ExternId,
        set: &[SetAction],
        replacing: Option<u32>,
    ) -> ControlResult<OneShot> {
        let p = self.profile(x)?;
        if !p.selector {
            return Err(invalid(format!(
                "table {}: a one-shot action set needs an action selector",
                td.name
            )));
        }
        let st = p.read();
        if !st.members.is_empty() || !st.groups.is_empty() {
            return Err(invalid(format!(
                "table {}: its action selector is programmed with members and groups; \
                 one-shot action sets cannot be mixed with them",
                td.name
            )));
        }
        if set.is_empty() {
            return Err(invalid("a one-shot action set needs at least one action"));
        }
        let replaced = replacing
            .and_then(|id| st.oneshots.get(&id))
            .filter(|o| o.retired_ns.is_none())
            .map_or(0, |o| o.actions.len());
        if st.oneshot_actions() - replaced + set.len() > p.size.max(1) as usize {
            return Err(ControlError::ResourceExhausted(format!(
                "table {}: its action selector holds at most {} actions",
                td.name, p.size
            )));
        }
        let mut actions = Vec::with_capacity(set.len());
        for a in set {
            if a.weight == 0 {
                return Err(invalid("one-shot action weight must be at least 1"));
            }
            let data = self.pack_call(td, &a.call, true)?;
            let func = td.actions[data.action as usize].func;
            actions.push((func, data.params.to_vec(), a.weight, a.watch));
        }
        Ok(OneShot::new(actions))
    }

    /// The action data to store for an entry's action: `data` from [`Switch::entry_data`],
    /// where a one-shot set becomes a new hidden set (or replaces `reuse`'s in place: a modify
    /// of an entry that already has one).
    pub(super) fn store_data(
        &self,
        td: &p4_ir::Table,
        rt: &RtTable,
        a: &EntryAction,
        data: ActionData,
        reuse: Option<&ActionData>,
    ) -> ControlResult<ActionData> {
        let (EntryAction::ActionSet(set), Some(x)) = (a, rt.indirect()) else {
            return Ok(data);
        };
        let reuse = reuse
            .filter(|d| d.action == ACTION_ONESHOT && d.params.len() == 4)
            .map(|d| {
                (
                    d,
                    u32::from_be_bytes(d.params[..4].try_into().unwrap_or([0; 4])),
                )
            });
        let o = self.oneshot_of(td, x, set, reuse.map(|r| r.1))?;
        let p = self.profile(x)?;
        let mut st = p.write();
        if let Some((old, id)) = reuse {
            if st.oneshots.get(&id).is_some_and(|o| o.retired_ns.is_none()) {
                st.oneshots.insert(id, o);
                return Ok(old.clone());
            }
        }
        let id = st.add_oneshot(o, self.now_ns());
        Ok(reference(ACTION_ONESHOT, id))
    }

    /// Drops a hidden set that was never stored in the table (a failed insert).
    pub(super) fn drop_oneshot(&self, rt: &RtTable, data: &ActionData) {
        if let (Some(x), ACTION_ONESHOT, true) =
            (rt.indirect(), data.action, data.params.len() == 4)
        {
            let id = u32::from_be_bytes(data.params[..4].try_into().unwrap_or([0; 4]));
            if let Ok(p) = self.profile(x) {
                p.write().oneshots.remove(&id);
            }
        }
    }

    /// Adjusts the reference counts of the member or group `data` points to; a one-shot set
    /// (one entry's own) is retired when its entry lets go of it.
    pub(super) fn count_ref(&self, rt: &RtTable, data: &ActionData, delta: i32) {
        let (Some(x), true) = (rt.indirect(), data.params.len() == 4) else {
            return;
        };
        let Ok(p) = self.profile(x) else { return };
        let id = u32::from_be_bytes(data.params[..4].try_into().unwrap_or([0; 4]));
        let mut st = p.write();
        if data.action == ACTION_ONESHOT {
            if delta < 0 {
                let now = self.now_ns();
                if let Some(o) = st.oneshots.get_mut(&id) {
                    o.retired_ns = Some(now);
                }
            }
            return;
        }
        let refs = match data.action {
            ACTION_MEMBER => st.members.get_mut(&id).map(|m| &mut m.refs),
            ACTION_GROUP => st.groups.get_mut(&id).map(|g| &mut g.refs),
            _ => None,
        };
        if let Some(r) = refs {
            *r = r.saturating_add_signed(delta);
        }
    }

    pub(super) fn insert_entry(
        &self,
        t: TableId,
        e: &TableEntry,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (td, rt) = self.rt(t)?;
        if td.entries_const {
            return Err(ControlError::PermissionDenied(format!(
                "table {} is const: its entries cannot be changed",
                td.name
            )));
        }
        let matches = self.check_key(td, &e.key)?;
        let Some(action) = &e.action else {
            return Err(invalid("an inserted entry needs an action"));
        };
        self.check_resources(td, e)?;
        let data = self.entry_data(td, rt, action)?;
        let ttl = match td.idle_timeout {
            p4_ir::IdleTimeout::None => None,
            _ => Some(self.ttl_profile(td, rt, e.idle_timeout_ns)?),
        };
        let data = self.store_data(td, rt, action, data, None)?;
        let h = match ttl {
            Some(p) => rt.table().insert_with_timeout(
                &matches,
                e.key.priority,
                data.clone(),
                p,
                self.now_ns(),
            ),
            None => rt.table().insert(&matches, e.key.priority, data.clone()),
        }
        .map_err(|err| {
            self.drop_oneshot(rt, &data);
            ControlError::from(err).context(&td.name)
        })?;
        let visible = self.now_ns();
        self.count_ref(rt, &data, 1);
        self.reset_direct(t as usize, h.slot());
        self.write_direct(td, h, e.counter, e.meter, e.meter_counters);
        rt.meta().entries().insert(
            h.slot() as u32,
            EntryMeta {
                gen: h.generation(),
                controller_metadata: e.controller_metadata,
                metadata: e.metadata.clone(),
                idle_timeout_ns: e.idle_timeout_ns,
                meter: e.meter,
            },
        );
        let probe = self.arm_probe(rt, h, 0, visible);
        let undo = undo.then(|| {
            Change::Entry(
                Op::Delete,
                t,
                TableEntry {
                    key: e.key.clone(),
                    ..TableEntry::default()
                },
            )
        });
        Ok((
            Applied {
                visible_ns: visible,
                probe,
            },
            undo,
        ))
    }

    /// Writes an entry's direct counter and meter (`None` meter: unconfigured) and, if given,
    /// the meter's color counts.
    pub(super) fn write_direct(
        &self,
        td: &p4_ir::Table,
        h: EntryHandle,
        counter: Option<CounterData>,
        meter: Option<MeterConfig>,
        meter_counters: Option<MeterCounterData>,
    ) {
        if let (Some(c), Some(dc)) = (counter, td.direct_counter) {
            if let Some(RtExtern::DirectCounter(cells)) = self.externs().get(dc) {
                if let Some(cell) = cells.get(h.slot()) {
                    cell.reset();
                    cell.count(c.packets, c.bytes);
                }
            }
        }
        if let Some(dm) = td.direct_meter {
            if let Some(RtExtern::DirectMeter(cells)) = self.externs().get(dm) {
                if let Some(cell) = cells.get(h.slot()) {
                    let mut m = cell.lock().unwrap_or_else(PoisonError::into_inner);
                    configure_meter(&mut m, meter);
                    if let Some(c) = meter_counters {
                        set_meter_counts(&mut m, c);
                    }
                }
            }
        }
    }

    /// The entry with this key, or `NotFound`.
    pub(super) fn find(
        &self,
        td: &p4_ir::Table,
        rt: &RtTable,
        key: &EntryKey,
    ) -> ControlResult<EntryView> {
        let matches = self.check_key(td, key)?;
        rt.table()
            .read(&matches, key.priority)
            .map_err(|e| ControlError::from(e).context(&td.name))
    }

    pub(super) fn modify_entry(
        &self,
        t: TableId,
        e: &TableEntry,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (td, rt) = self.rt(t)?;
        let old = self.find(td, rt, &e.key)?;
        if td.entries_const && e.action.is_some() {
            return Err(ControlError::PermissionDenied(format!(
                "table {} is const: only direct resources of its entries can be modified",
                td.name
            )));
        }
        self.check_resources(td, e)?;
        let undo = undo.then(|| {
            let old_state = self.entry_state(t, td, rt, &old);
            let (old_counter, old_meter_counters) = (old_state.counter, old_state.meter_counters);
            let mut undo_entry = old_state.into_entry();
            // What the modify overwrites of the direct resources, the undo writes back.
            undo_entry.counter = e.counter.and(old_counter);
            undo_entry.meter_counters = e.meter_counters.and(old_meter_counters);
            Change::Entry(Op::Modify, t, undo_entry)
        });
        let new_data = match &e.action {
            Some(a) => Some(self.entry_data(td, rt, a)?),
            None => None,
        };
        let ttl = if e.idle_timeout_ns != self.meta_of(rt, &old).idle_timeout_ns
            && td.idle_timeout != p4_ir::IdleTimeout::None
        {
            Some(self.ttl_profile(td, rt, e.idle_timeout_ns)?)
        } else {
            None
        };
        let matches = self.check_key(td, &e.key)?;
        // Nothing is changed before this point; a one-shot set replaces the entry's own set
        // in place (`reused`: the entry's data stays the same reference).
        let new_data = match (&e.action, new_data) {
            (Some(a), Some(d)) => Some(self.store_data(td, rt, a, d, Some(&old.data))?),
            (_, d) => d,
        };
        let reused = new_data
            .as_ref()
            .is_some_and(|d| d.action == ACTION_ONESHOT && *d == old.data);
        if let Some(p) = ttl {
            rt.table().set_expire_profile(old.id, p, self.now_ns());
        }
        let (h, version) = match &new_data {
            Some(d) => {
                let r = rt
                    .table()
                    .modify_versioned(&matches, e.key.priority, d)
                    .map_err(|err| {
                        if !reused {
                            self.drop_oneshot(rt, d);
                        }
                        ControlError::from(err).context(&td.name)
                    })?;
                if !reused {
                    self.count_ref(rt, d, 1);
                    self.count_ref(rt, &old.data, -1);
                }
                r
            }
            None => (old.id, old.version),
        };
        let visible = self.now_ns();
        if e.counter.is_some() || td.direct_meter.is_some() {
            // P4Runtime: an unset counter is left alone; an unset meter config is reset.
            self.write_direct(td, h, e.counter, e.meter, e.meter_counters);
        }
        rt.meta().entries().insert(
            h.slot() as u32,
            EntryMeta {
                gen: h.generation(),
                controller_metadata: e.controller_metadata,
                metadata: e.metadata.clone(),
                idle_timeout_ns: e.idle_timeout_ns,
                meter: e.meter,
            },
        );
        let probe = match new_data {
            Some(_) => self.arm_probe(rt, h, version, visible),
            None => None,
        };
        Ok((
            Applied {
                visible_ns: visible,
                probe,
            },
            undo,
        ))
    }

    pub(super) fn delete_entry(
        &self,
        t: TableId,
        key: &EntryKey,
        undo: bool,
    ) -> ControlResult<(Applied, Option<Change>)> {
        let (td, rt) = self.rt(t)?;
        if td.entries_const {
            return Err(ControlError::PermissionDenied(format!(
                "table {} is const: its entries cannot be deleted",
                td.name
            )));
        }
        let old = self.find(td, rt, key)?;
        let undo = undo.then(|| {
            let mut undo_entry = self.entry_state(t, td, rt, &old).into_entry();
            undo_entry.counter = self.direct_counter_of(td, old.id);
            Change::Entry(Op::Insert, t, undo_entry)
        });
        rt.table()
            .delete_id(old.id)
            .map_err(|e| ControlError::from(e).context(&td.name))?;
        let visible = self.now_ns();
        self.count_ref(rt, &old.data, -1);
        rt.meta().entries().remove(old.id.slot() as u32);
        Ok((
            Applied {
                visible_ns: visible,
                probe: None,
            },
            undo,
        ))
    }

    pub(super) fn meta_of(&self, rt: &RtTable, v: &EntryView) -> EntryMeta {
        rt.meta()
            .entries()
            .get(v.id.slot() as u32, v.id.generation())
            .unwrap_or_default()
    }

    pub(super) fn direct_meter_counters_of(
        &self,
        td: &p4_ir::Table,
        h: EntryHandle,
    ) -> Option<MeterCounterData> {
        let dm = td.direct_meter?;
        match self.externs().get(dm) {
            Some(RtExtern::DirectMeter(cells)) => cells
                .get(h.slot())
                .map(|m| meter_counts(&m.lock().unwrap_or_else(PoisonError::into_inner))),
            _ => None,
        }
    }

    pub(super) fn direct_counter_of(
        &self,
        td: &p4_ir::Table,
        h: EntryHandle,
    ) -> Option<CounterData> {
        let dc = td.direct_counter?;
        match self.externs().get(dc) {
            Some(RtExtern::DirectCounter(cells)) => cells.get(h.slot()).map(|c| {
                let (packets, bytes) = c.read();
                CounterData { packets, bytes }
            }),
            _ => None,
        }
    }

    /// The typed state of a table's entry.
    pub(super) fn entry_state(
        &self,
        t: TableId,
        td: &p4_ir::Table,
        rt: &RtTable,
        v: &EntryView,
    ) -> EntryState {
        let meta = rt
            .meta()
            .entries()
            .get(v.id.slot() as u32, v.id.generation());
        let from_data_plane = meta.is_none() && td.add_on_miss;
        let meta = meta.unwrap_or_default();
        let action = match v.data.action {
            ACTION_MEMBER | ACTION_GROUP | ACTION_ONESHOT if v.data.params.len() == 4 => {
                let id = u32::from_be_bytes(v.data.params[..4].try_into().unwrap_or([0; 4]));
                match v.data.action {
                    ACTION_MEMBER => EntryAction::Member(id),
                    ACTION_GROUP => EntryAction::Group(id),
                    _ => EntryAction::ActionSet(self.action_set(td, rt, id)),
                }
            }
            a => EntryAction::Call(ActionCall {
                action: a,
                params: td
                    .actions
                    .get(a as usize)
                    .map(|ad| unpack_params(ad, &v.data.params))
                    .unwrap_or_default(),
            }),
        };
        let profile_ns = v
            .expire_profile
            .and_then(|p| rt.table().profile_duration(p))
            .filter(|&d| d != NEVER_NS);
        let idle_timeout_ns = if from_data_plane {
            profile_ns.unwrap_or(0)
        } else {
            meta.idle_timeout_ns
        };
        let elapsed_ns = match (v.deadline_ns, v.expire_profile) {
            (Some(d), Some(p)) => {
                let ttl = rt.table().profile_duration(p).unwrap_or(0);
                Some(self.now_ns().saturating_sub(d.saturating_sub(ttl)))
            }
            _ if td.idle_timeout != p4_ir::IdleTimeout::None => Some(0),
            _ => None,
        };
        let _ = t;
        EntryState {
            key: EntryKey {
                matches: v.matches.clone(),
                priority: v.priority,
            },
            action,
            controller_metadata: meta.controller_metadata,
            metadata: meta.metadata,
            idle_timeout_ns,
            elapsed_ns,
            counter: self.direct_counter_of(td, v.id),
            meter: meta.meter,
            meter_counters: self.direct_meter_counters_of(td, v.id),
            is_const: td.entries_const,
            from_data_plane,
            handle: v.id,
        }
    }

    /// The actions of one-shot set `id` of table `td`'s selector, as written.
    pub(super) fn action_set(&self, td: &p4_ir::Table, rt: &RtTable, id: u32) -> Vec<SetAction> {
        let Some(p) = rt.indirect().and_then(|x| self.profile(x).ok()) else {
            return Vec::new();
        };
        let st = p.read();
        let Some(o) = st.oneshots.get(&id) else {
            return Vec::new();
        };
        o.actions
            .iter()
            .map(|(func, params, weight, watch)| {
                let a = td.action_of(*func).unwrap_or(ACTION_NONE);
                SetAction {
                    call: ActionCall {
                        action: a,
                        params: td
                            .actions
                            .get(a as usize)
                            .map(|ad| unpack_params(ad, params))
                            .unwrap_or_default(),
                    },
                    weight: *weight,
                    watch: *watch,
                }
            })
            .collect()
    }

    /// The entry of table `t` with this key.
    pub fn read_entry(&self, t: TableId, key: &EntryKey) -> ControlResult<EntryState> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        let v = self.find(td, rt, key)?;
        Ok(self.entry_state(t, td, rt, &v))
    }

    /// Every entry of table `t` (those the data plane added included), in slot order.
    pub fn read_entries(&self, t: TableId) -> ControlResult<Vec<EntryState>> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        Ok(rt
            .table()
            .iter()
            .iter()
            .map(|v| self.entry_state(t, td, rt, v))
            .collect())
    }

    /// Whether the control plane changed table `t`'s default action from the program's (what
    /// a pipeline change that keeps the forwarding state carries over).
    pub fn default_changed(&self, t: TableId) -> ControlResult<bool> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        let d = rt.table().default_action();
        Ok(match &td.default_action {
            Some((a, params)) => {
                // The cell may hold the parameters padded to the table's widest action.
                let p = d.params.as_slice();
                d.action != *a
                    || p.get(..params.len()) != Some(&params[..])
                    || p.iter().skip(params.len()).any(|b| *b != 0)
            }
            None => true,
        })
    }

    /// Table `t`'s default action: `None` when no action runs on a miss.
    pub fn read_default(&self, t: TableId) -> ControlResult<Option<ActionCall>> {
        let _r = self.control_read();
        let (td, rt) = self.rt(t)?;
        let d = rt.table().default_action();
        Ok(td.actions.get(d.action as usize).map(|a| ActionCall {
            action: d.action,
            params: unpack_params(a, &d.params),
        }))
    }

    pub(super) fn set_default(
        &self,
        t: TableId,
        call: Option<&ActionCall>,
    ) -> ControlResult<(Applied, Change)> {
        let (td, rt) = self.rt(t)?;
        if td.default_const {
            return Err(ControlError::PermissionDenied(format!(
                "table {} has a const default action",
                td.name
            )));
        }
        let old = rt.table().default_action();
        let undo = Change::Default(
            t,
            td.actions.get(old.action as usize).map(|a| ActionCall {
                action: old.action,
                params: unpack_params(a, &old.params),
            }),
        );
        let data = match call {
            Some(c) => self.pack_call(td, c, false)?,
            None => match &td.default_action {
                Some((a, p)) => ActionData::new(*a, p.as_slice()),
                None => ActionData::new(ACTION_NONE, &[][..]),
            },
        };
        rt.table()
            .set_default(data)
            .map_err(|e| ControlError::from(e).context(&td.name))?;
        Ok((
            Applied {
                visible_ns: self.now_ns(),
                probe: None,
            },
            undo,
        ))
    }

    /// The idle-timeout notifications waiting for the controller, as typed entries (entries
    /// deleted since are skipped). Each notified entry's timer is restarted, so a still idle
    /// entry is notified again one idle timeout later (P4Runtime §9.1.5).
    pub fn take_idle_notifications(&self) -> Vec<IdleNotification> {
        let notes = self.take_notifications();
        if notes.is_empty() {
            return Vec::new();
        }
        let _r = self.control_read();
        let now = self.now_ns();
        let mut out = Vec::with_capacity(notes.len());
        for n in notes {
            let Ok((td, rt)) = self.rt(n.table) else {
                continue;
            };
            let Some(v) = rt.table().get(n.entry.id) else {
                continue;
            };
            out.push(IdleNotification {
                table: n.table,
                entry: self.entry_state(n.table, td, rt, &v),
            });
            rt.table().restart_timer(v.id, now);
        }
        out
    }
}
