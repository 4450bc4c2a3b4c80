//! Resource profiles: named bundles of limits (time, output, processes, memory, file size,
//! CPU, network), every one of them enforced by the executor, none only reported.
//!
//! A profile is named in the policy (`[terminal.sandbox] profile`, a rule's `profile`) and
//! read by serde: a name that is not `strict`, `standard` or `permissive` is refused when
//! the policy is loaded, with the allowed names in the error, and nothing later checks it
//! again.
//!
//! The effective limit of a call is the tightest of three: the profile, `[terminal.limits]`
//! (the operator's ceiling over every profile) and the caller's own `timeout_seconds`. A
//! caller can only lower a limit, never raise one.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ExecLimits;

/// A named resource profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Short, small, offline: for commands that only read and print.
    Strict,
    /// The default.
    Standard,
    /// Long-running builds and big outputs.
    Permissive,
}

/// Whether `profile` is the same as or stricter than `than` (strict < standard <
/// permissive, the order of [`Profile::ALL`]).
pub fn no_looser(profile: Profile, than: Profile) -> bool {
    let rank = |p: Profile| Profile::ALL.iter().position(|q| *q == p);
    rank(profile) <= rank(than)
}

/// Mebibyte.
const MIB: u64 = 1 << 20;

impl Profile {
    /// Every profile, tightest first.
    pub const ALL: [Profile; 3] = [Profile::Strict, Profile::Standard, Profile::Permissive];

    /// The profile's name as written in the policy.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Strict => "strict",
            Profile::Standard => "standard",
            Profile::Permissive => "permissive",
        }
    }

    /// The profile's own values, before `[terminal.limits]` and the caller tighten them.
    pub fn limits(self) -> ExecLimits {
        match self {
            // shellguard's values for timeout, output caps and open files; process, memory,
            // file-size and CPU limits are ours (the peer declared memory but never applied it).
            Profile::Strict => ExecLimits {
                timeout: Duration::from_secs(5),
                max_output_bytes: MIB as usize,
                open_files: 32,
                processes: 16,
                memory_bytes: 128 * MIB,
                file_size_bytes: 16 * MIB,
                cpu_seconds: 10,
                network: false,
            },
            Profile::Standard => ExecLimits {
                timeout: Duration::from_secs(30),
                max_output_bytes: 10 * MIB as usize,
                open_files: 256,
                processes: 128,
                memory_bytes: 512 * MIB,
                file_size_bytes: 1024 * MIB,
                cpu_seconds: 60,
                network: true,
            },
            Profile::Permissive => ExecLimits {
                timeout: Duration::from_secs(300),
                max_output_bytes: 100 * MIB as usize,
                open_files: 1024,
                processes: 512,
                memory_bytes: 2048 * MIB,
                file_size_bytes: 8192 * MIB,
                cpu_seconds: 600,
                network: true,
            },
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a call's limits were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitsError {
    /// The caller asked for more time than the policy allows.
    #[error(
        "timeout_seconds {asked} is longer than this command may run: it must be a whole \
         number of seconds from 1 to {allowed} (the policy's limit; a call may only lower it)"
    )]
    TimeoutAboveLimit {
        /// The caller's `timeout_seconds`.
        asked: u64,
        /// The policy's limit, in seconds.
        allowed: u64,
    },
}

/// The limits a call runs under: the profile's, tightened by the operator's
/// `[terminal.limits]` and then by the caller's `timeout_seconds`.
///
/// A caller asking for more time than the result allows gets an `Err` with the reason: a
/// call may only lower a limit (a model cannot buy itself a longer run).
pub fn effective_limits(
    profile: Profile,
    ceiling_timeout_seconds: u64,
    ceiling_output_bytes: u64,
    caller_timeout_seconds: Option<u64>,
) -> Result<ExecLimits, LimitsError> {
    let mut limits = profile.limits();
    let ceiling = Duration::from_secs(ceiling_timeout_seconds);
    limits.timeout = limits.timeout.min(ceiling);
    limits.max_output_bytes = limits
        .max_output_bytes
        .min(usize::try_from(ceiling_output_bytes).unwrap_or(usize::MAX));
    if let Some(t) = caller_timeout_seconds {
        let allowed = limits.timeout.as_secs();
        // A caller may tighten a limit, never widen it.
        if t > allowed {
            return Err(LimitsError::TimeoutAboveLimit { asked: t, allowed });
        }
        limits.timeout = Duration::from_secs(t);
    }
    clamp_cpu(&mut limits);
    Ok(limits)
}

/// CPU time can never be the reason a call outlives its wall-clock budget by much: at most
/// four CPU seconds per second of timeout (rounded up), at least one.
pub(crate) fn clamp_cpu(limits: &mut ExecLimits) {
    let seconds = limits.timeout.as_secs() + u64::from(limits.timeout.subsec_nanos() > 0);
    limits.cpu_seconds = limits.cpu_seconds.min(seconds.saturating_mul(4).max(1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Named {
        profile: Profile,
    }

    #[test]
    fn the_policy_names_are_the_serde_names() {
        for p in Profile::ALL {
            let named: Named = toml::from_str(&format!("profile = '{}'", p.name())).unwrap();
            assert_eq!(named.profile, p);
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_allowed_ones() {
        let e = toml::from_str::<Named>("profile = 'lenient'").unwrap_err();
        let message = e.to_string();
        assert!(
            message.contains(
                "unknown variant `lenient`, expected one of `strict`, `standard`, `permissive`"
            ),
            "{message}"
        );
        // The old name-by-case spelling is not taken either.
        assert!(toml::from_str::<Named>("profile = 'Strict'").is_err());
    }

    #[test]
    fn caller_can_lower_but_not_raise_the_timeout() {
        let l = effective_limits(Profile::Standard, 30, 65536, Some(2)).unwrap();
        assert_eq!(l.timeout, Duration::from_secs(2));
        assert!(effective_limits(Profile::Standard, 30, 65536, Some(31)).is_err());
        // strict's own 5 s wins over a 30 s ceiling, so 6 s is a widening.
        // The refusal gives the range the call may ask for, the profile's own limit included.
        assert_eq!(
            effective_limits(Profile::Strict, 30, 65536, Some(6))
                .unwrap_err()
                .to_string(),
            "timeout_seconds 6 is longer than this command may run: it must be a whole number \
             of seconds from 1 to 5 (the policy's limit; a call may only lower it)"
        );
    }

    #[test]
    fn operator_ceiling_tightens_every_profile() {
        let l = effective_limits(Profile::Permissive, 30, 65536, None).unwrap();
        assert_eq!(l.timeout, Duration::from_secs(30));
        assert_eq!(l.max_output_bytes, 65536);
        assert_eq!(l.memory_bytes, 2048 * MIB);
    }
}
