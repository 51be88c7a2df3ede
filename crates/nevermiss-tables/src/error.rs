//! Errors of table operations (messages lowercase, no trailing period).

use std::fmt;

/// Why a table operation was refused. No operation panics on bad input; it returns one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// An entry with the same match spec (and priority) is already present.
    Exists,
    /// No entry with this match spec (and priority), or a stale entry id.
    NotFound,
    /// Every slot of the table is in use.
    Full,
    /// A key or match spec does not fit the table's key layout.
    BadKey {
        /// Index of the offending key field, if one field is to blame.
        field: Option<usize>,
        /// What is wrong.
        reason: &'static str,
    },
    /// Priority missing (0) on a table that needs one, or given on a table that has none.
    BadPriority,
    /// Action parameters longer than the table's `max_params_bytes`.
    ParamsTooLong {
        /// Bytes given.
        len: usize,
        /// Bytes allowed.
        max: usize,
    },
    /// Unknown expire-time profile id.
    BadProfile(u32),
    /// Operation needs a table with an idle timeout.
    NoIdleTimeout,
    /// `add_on_miss` on a table that does not have `add_on_miss = true`.
    NotAddOnMiss,
    /// The table description is unusable.
    BadSpec(String),
    /// The table's memory could not be allocated.
    OutOfMemory,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Exists => write!(f, "entry already exists"),
            TableError::NotFound => write!(f, "entry not found"),
            TableError::Full => write!(f, "table is full"),
            TableError::BadKey { field: Some(i), reason } => write!(f, "bad key field {i}: {reason}"),
            TableError::BadKey { field: None, reason } => write!(f, "bad key: {reason}"),
            TableError::BadPriority => write!(
                f,
                "priority must be non-zero for tables with ternary, range or optional fields and zero otherwise"
            ),
            TableError::ParamsTooLong { len, max } => {
                write!(f, "action parameters are {len} bytes, the table allows at most {max}")
            }
            TableError::BadProfile(id) => write!(f, "unknown expire time profile {id}"),
            TableError::NoIdleTimeout => write!(f, "table has no idle timeout"),
            TableError::NotAddOnMiss => write!(f, "table does not have add_on_miss"),
            TableError::BadSpec(why) => write!(f, "bad table description: {why}"),
            TableError::OutOfMemory => write!(f, "out of memory allocating the table"),
        }
    }
}

impl std::error::Error for TableError {}
