//! The kernel's CONFIG_DEBUG_VM assertions (include/linux/mmdebug.h) as the model's:
//! `vm_bug_on!` where the kernel has VM_BUG_ON / VM_BUG_ON_FOLIO, `vm_warn_on!` where it
//! has VM_WARN_ON / VM_WARN_ON_ONCE / WARN_ON_ONCE. Both are debug assertions: on in the
//! tests' build profile (`checked`, which states `debug-assertions = true`) and in debug
//! builds, compiled out of release builds. A kernel warning goes on; the model's fails,
//! since a state the kernel warns about is a bug of the model.

/// Fails (in builds with debug assertions) when `cond` holds, as VM_BUG_ON does.
macro_rules! vm_bug_on {
    ($cond:expr) => {
        debug_assert!(!($cond), concat!("VM_BUG_ON(", stringify!($cond), ")"))
    };
    ($cond:expr, $($arg:tt)+) => {
        debug_assert!(!($cond), $($arg)+)
    };
}

/// Fails (in builds with debug assertions) when `cond` holds, where the kernel warns.
macro_rules! vm_warn_on {
    ($cond:expr) => {
        debug_assert!(!($cond), concat!("VM_WARN_ON(", stringify!($cond), ")"))
    };
    ($cond:expr, $($arg:tt)+) => {
        debug_assert!(!($cond), $($arg)+)
    };
}

pub(crate) use {vm_bug_on, vm_warn_on};

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "VM_BUG_ON(1 + 1 == 2)")]
    fn vm_bug_on_fails_when_its_condition_holds() {
        vm_bug_on!(1 + 1 == 2);
    }

    #[test]
    fn they_pass_when_their_condition_does_not_hold() {
        vm_bug_on!(1 + 1 == 3);
        vm_warn_on!(false, "never {}", 1);
    }

    /// The tests' profile keeps debug assertions on (Cargo.toml, `[profile.checked]`), so the
    /// assertions above are checked whenever the tests run.
    #[test]
    fn the_tests_run_with_debug_assertions() {
        assert!(
            cfg!(debug_assertions),
            "tests built without debug assertions: use --profile checked"
        );
    }
}
