//! One file a subcommand.

mod bench;
mod calibrate;
mod compare;
pub mod kernel;
mod report;
mod run;
mod sweep;
pub mod trace;
mod validate;

pub(crate) use bench::bench;
pub(crate) use calibrate::calibrate;
pub(crate) use compare::compare;
pub(crate) use report::report_cmd;
pub(crate) use run::{fio, run};
pub(crate) use sweep::sweep;
pub(crate) use validate::validate;
