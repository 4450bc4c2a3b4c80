//! The kernel sandbox under attack: real processes, temporary folders, a test policy that
//! allow-lists the tools each attack needs (bash, python3, sh, setsid, sleep, yes, touch,
//! cp). Each test first asks the start-up probe whether the kernel feature it relies on is
//! there, and skips LOUDLY when it is not (set STRICT_SANDBOX_TESTS=1 to turn a skip
//! into a failure, as CI on a capable host should).

use std::io::ErrorKind;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::sandbox_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn landlock_refuses_a_write_outside_the_jail_through_an_allowlisted_program() {
    // Without the read-only view (namespaces off), so Landlock alone is what refuses.
    let t = Setup::new(&Options {
        namespaces: false,
        ..Options::default()
    });
    if !t.has(
        Feature::Landlock,
        "landlock_refuses_a_write_outside_the_jail",
    ) {
        return;
    }
    // No argument names a path (no '/'), so the path checks let it through: only the
    // kernel stands between `cd ..` and a file next to the jail.
    let e = t
        .run(json!({"command": "bash -c \"cd ..; touch escaped-by-touch; cp -r . escaped-by-cp\""}))
        .await;
    assert_eq!(e["code"], "OK", "{e}");
    assert_ne!(e["detail"]["exit_code"], 0, "{e}");
    let stderr = e["detail"]["stderr"].as_str().unwrap_or_default();
    assert!(stderr.contains("Permission denied"), "{e}");
    assert!(!t.dir.path().join("escaped-by-touch").exists());
    assert!(!t.dir.path().join("escaped-by-cp").exists());
    // Writing inside the jail still works.
    let e = t
        .run(json!({"command": "bash -c \"touch inside; cp inside inside-copy\""}))
        .await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    assert!(t.jail().join("inside-copy").exists());

    // The same attack with the sandbox off succeeds: the test is not vacuous.
    let off = Setup::new(&Options {
        enabled: false,
        ..Options::default()
    });
    let e = off
        .run(json!({"command": "bash -c \"cd ..; touch escaped-by-touch\""}))
        .await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    assert!(off.dir.path().join("escaped-by-touch").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn landlock_refuses_reading_etc_shadow() {
    let t = Setup::new(&Options::default());
    if !t.has(Feature::Landlock, "landlock_refuses_reading_etc_shadow") {
        return;
    }
    // chr(47) is '/': the argument holds no path the jail check could see.
    let read = "python3 -c \"print(len(open(chr(47)+'etc'+chr(47)+'shadow').read()))\"";
    let e = t.run(json!({ "command": read })).await;
    assert_eq!(e["code"], "OK", "{e}");
    assert_ne!(e["detail"]["exit_code"], 0, "{e}");
    assert!(
        e["detail"]["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("PermissionError"),
        "{e}"
    );
    // Landlock, not file permissions, made the difference: a world-readable file outside
    // the jail and the read paths is refused too, and read without the sandbox.
    let read_outside = "python3 -c \"import os; print(open(os.path.join(os.pardir, 'world-readable.txt')).read())\"";
    std::fs::write(t.dir.path().join("world-readable.txt"), "readable by all\n").unwrap();
    let e = t.run(json!({ "command": read_outside })).await;
    assert_eq!(e["code"], "OK", "{e}");
    assert_ne!(e["detail"]["exit_code"], 0, "{e}");
    let off = Setup::new(&Options {
        enabled: false,
        ..Options::default()
    });
    std::fs::write(
        off.dir.path().join("world-readable.txt"),
        "readable by all\n",
    )
    .unwrap();
    let e = off.run(json!({ "command": read_outside })).await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
}

fn tcp_attempt(port: u16) -> String {
    format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')\""
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_profile_refuses_a_tcp_connection_to_localhost() {
    let t = Setup::new(&Options {
        profile: "strict",
        ..Options::default()
    });
    if !t.has(Feature::Seccomp, "strict_profile_refuses_a_tcp_connection") {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // One attempt, bounded by python's own 2 s timeout and the profile's 5 s.
    let e = t.run(json!({ "command": tcp_attempt(port) })).await;
    assert_eq!(e["code"], "OK", "{e}");
    assert_ne!(e["detail"]["exit_code"], 0, "{e}");
    assert_eq!(t.report(&e)["limits"]["network"], "off", "{e}");
    // And an empty network namespace behind the seccomp filter (made by the launcher
    // itself with unshare; a user namespace only where it needs one to do so).
    let namespaces = t.report(&e)["mechanisms"]["namespaces"].clone();
    assert!(
        namespaces
            .as_array()
            .is_some_and(|n| n.contains(&json!("net"))),
        "{e}"
    );
    assert!(
        e["detail"]["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("Operation not permitted"),
        "{e}"
    );
    assert!(
        matches!(listener.accept(), Err(ref err) if err.kind() == ErrorKind::WouldBlock),
        "the listener saw a connection"
    );

    // Under `standard` the same command connects: the refusal came from the profile.
    let open = Setup::new(&Options::default());
    let e = open.run(json!({ "command": tcp_attempt(port) })).await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    assert!(
        listener.accept().is_ok(),
        "standard profile could not connect: {e}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_bomb_is_stopped_by_the_process_limit() {
    let t = Setup::new(&Options::default());
    if !t.has(
        Feature::ProcessLimit,
        "fork_bomb_is_stopped_by_the_process_limit",
    ) {
        return;
    }
    let marker = Marker::new();
    let started = Instant::now();
    // The classic bomb, kept alive by its first shell (in a PID namespace the tree dies
    // with the command, so a bomb whose root exits at once would prove nothing).
    let bomb = format!("bash -c \":(){{ :|:& }};:; sleep 5 # {}\"", marker.0);
    let e = t
        .run(json!({ "command": bomb, "timeout_seconds": 3 }))
        .await;
    assert!(started.elapsed() < Duration::from_secs(10), "{e}");
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    // The model learns it from the result itself; the record holds the same count.
    let hits = e["detail"]["limit_hits"]["processes"].as_u64().unwrap_or(0);
    assert!(hits > 0, "the process limit never refused a fork: {e}");
    assert_eq!(t.report(&e)["limit_hits"], e["detail"]["limit_hits"], "{e}");
    assert_eq!(marker.survivors(), Vec::<String>::new(), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_bomb_is_killed_by_the_memory_limit() {
    let t = Setup::new(&Options::default());
    if !t.has(
        Feature::MemoryLimit,
        "memory_bomb_is_killed_by_the_memory_limit",
    ) {
        return;
    }
    // 1 GiB, written (so every page is charged), against standard's 512 MiB.
    let e = t
        .run(json!({"command": "python3 -c \"x = b'x' * (1 << 30); print(len(x))\""}))
        .await;
    assert_eq!(e["detail"]["signal"], 9, "{e}");
    assert_eq!(e["detail"]["stdout"], "", "{e}");
    // The model learns it from the result itself; the record holds the same count.
    let kills = e["detail"]["limit_hits"]["memory_oom_kills"]
        .as_u64()
        .unwrap_or(0);
    assert!(kills >= 1, "{e}");
    assert_eq!(t.report(&e)["limit_hits"], e["detail"]["limit_hits"], "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn output_flood_is_capped_and_its_whole_tree_killed() {
    let t = Setup::new(&Options::default());
    if !t.has(
        Feature::TreeKill,
        "output_flood_is_capped_and_its_whole_tree_killed",
    ) {
        return;
    }
    let marker = Marker::new();
    let flood = format!(
        "bash -c \"yes {m} & yes {m} & setsid yes {m} > /dev/null & wait\"",
        m = marker.0
    );
    let started = Instant::now();
    let e = t.run(json!({ "command": flood })).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{e}");
    assert_eq!(e["code"], "OUTPUT_TRUNCATED", "{e}");
    assert_eq!(e["detail"]["killed"], true, "{e}");
    assert!(e["detail"]["stdout"].as_str().unwrap_or_default().len() <= 70_000);
    assert_eq!(marker.survivors(), Vec::<String>::new(), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sleep_past_the_timeout_is_killed_with_no_survivor() {
    let t = Setup::new(&Options::default());
    if !t.has(
        Feature::TreeKill,
        "sleep_past_the_timeout_is_killed_with_no_survivor",
    ) {
        return;
    }
    let marker = Marker::new();
    let started = Instant::now();
    let e = t
        .run(json!({ "command": format!("sleep {}", marker.sleep_arg()), "timeout_seconds": 1 }))
        .await;
    assert!(started.elapsed() < Duration::from_secs(4), "{e}");
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert_eq!(e["ok"], false);
    assert_eq!(marker.survivors(), Vec::<String>::new(), "{e}");
}

/// `setsid sleep &` and a double fork, under each tree-kill mechanism on its own.
async fn escapees_do_not_survive(options: Options, name: &str) {
    let t = Setup::new(&options);
    let feature = if options.cgroups {
        Feature::CgroupKill
    } else {
        Feature::PidNamespace
    };
    if !t.has(feature, name) {
        return;
    }
    for shape in [
        "sh -c \"setsid sleep {} &\"",
        "sh -c \"(setsid sleep {} &) ; exit 0\"",
        "sh -c \"sh -c 'sleep {} &' &\"",
    ] {
        let marker = Marker::new();
        let command = shape.replace("{}", &marker.sleep_arg());
        let started = Instant::now();
        let e = t.run(json!({ "command": command })).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{e}");
        assert_eq!(e["code"], "OK", "{command}: {e}");
        let expected = if options.cgroups {
            "cgroup.kill"
        } else {
            "pid namespace"
        };
        assert_eq!(t.report(&e)["mechanisms"]["tree_kill"], expected, "{e}");
        if !options.namespaces {
            assert_eq!(t.report(&e)["mechanisms"]["namespaces"], json!([]), "{e}");
        }
        assert_eq!(marker.survivors(), Vec::<String>::new(), "{command}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn setsid_and_double_fork_escapees_die_with_the_call() {
    escapees_do_not_survive(Options::default(), "setsid_and_double_fork (full sandbox)").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn setsid_escapees_die_by_cgroup_kill_alone() {
    escapees_do_not_survive(
        Options {
            namespaces: false,
            ..Options::default()
        },
        "setsid_escapees_die_by_cgroup_kill_alone",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn setsid_escapees_die_with_the_pid_namespace_alone() {
    escapees_do_not_survive(
        Options {
            cgroups: false,
            ..Options::default()
        },
        "setsid_escapees_die_with_the_pid_namespace_alone",
    )
    .await;
}

/// The control experiment: with the sandbox off (process group only), the `setsid`
/// escapee does survive, so the scan above can see a survivor when there is one.
#[tokio::test(flavor = "multi_thread")]
async fn without_the_sandbox_a_setsid_escapee_survives_the_process_group_kill() {
    let t = Setup::new(&Options {
        enabled: false,
        ..Options::default()
    });
    let marker = Marker::new();
    let e = t
        .run(json!({ "command": format!("sh -c \"setsid sleep {} & sleep 0.5\"", marker.sleep_arg()) }))
        .await;
    assert_eq!(e["code"], "OK", "{e}");
    // The sandbox disabled by policy is a downgrade: the result carries the whole report.
    let report = &e["detail"]["sandbox_report"];
    assert_eq!(report, &t.report(&e), "{e}");
    assert_eq!(report["mechanisms"]["tree_kill"], "process group", "{e}");
    assert!(
        e["detail"]["sandbox"]
            .as_str()
            .is_some_and(|s| s.contains(" sandbox=off ") && s.contains(" kill=process-group ")),
        "{e}"
    );
    let survivors = marker.survivors();
    for line in &survivors {
        if let Some(pid) = line.split(':').next().and_then(|p| p.parse::<i32>().ok()) {
            let _ = std::process::Command::new("kill")
                .arg("-9")
                .arg(pid.to_string())
                .status();
        }
    }
    assert_eq!(
        survivors.len(),
        1,
        "expected the escapee to survive: {survivors:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn seccomp_refuses_ptrace_and_io_uring() {
    let t = Setup::new(&Options::default());
    if !t.has(Feature::Seccomp, "seccomp_refuses_ptrace_and_io_uring") {
        return;
    }
    // syscall numbers for x86_64 / aarch64: ptrace 101/117, io_uring_setup 425 on both.
    let (ptrace, uring) = if cfg!(target_arch = "aarch64") {
        (117, 425)
    } else {
        (101, 425)
    };
    let probe = format!(
        "python3 -c \"import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); \
         r1 = libc.syscall({ptrace}, 16, os.getppid(), 0, 0); e1 = ctypes.get_errno(); \
         r2 = libc.syscall({uring}, 1, 0); e2 = ctypes.get_errno(); print(r1, e1, r2, e2)\""
    );
    let e = t.run(json!({ "command": probe })).await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    // EPERM (1) for both.
    assert_eq!(e["detail"]["stdout"], "-1 1 -1 1\n", "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_result_reports_the_profile_limits_and_mechanisms() {
    let t = Setup::new(&Options::default());
    let e = t.run(json!({"command": "true"})).await;
    // The result has the summary; the whole report is in the call's audit record.
    assert!(e["detail"]["sandbox"].is_string(), "{e}");
    let sandbox = &t.report(&e);
    assert_eq!(sandbox["profile"], "standard", "{e}");
    assert_eq!(sandbox["limits"]["open_files"], 256, "{e}");
    assert_eq!(sandbox["limits"]["processes"], 128, "{e}");
    assert_eq!(sandbox["limits"]["memory_bytes"], 512u64 << 20, "{e}");
    assert_eq!(sandbox["limits"]["timeout_seconds"], 30, "{e}");
    assert_eq!(sandbox["mechanisms"]["launcher"], true, "{e}");
    assert!(
        sandbox["mechanisms"]["rlimits"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x == "NOFILE=256"))
    );
    if t.has(Feature::Landlock, "report: landlock") {
        assert!(
            sandbox["mechanisms"]["landlock"]["abi"]
                .as_u64()
                .unwrap_or(0)
                >= 3
        );
    }
    // explain_command reports the same, without running anything.
    let x = t
        .core
        .explain_command(json!({"command": "true"}).as_object());
    assert_eq!(x.detail["sandbox"]["profile"], "standard");
    assert_eq!(x.detail["sandbox"]["source"], "start-up probe");
    assert_eq!(x.detail["sandbox"]["limits"]["processes"], 128);
    // Said once: not also beside `sandbox`.
    assert!(x.detail.get("limits").is_none() && x.detail.get("profile").is_none());
    // A caller may lower the timeout, never raise it.
    let e = t
        .run(json!({"command": "true", "timeout_seconds": 31}))
        .await;
    assert_eq!(e["code"], "INVALID_REQUEST", "{e}");
    let e = t
        .run(json!({"command": "true", "timeout_seconds": 2}))
        .await;
    assert_eq!(t.report(&e)["limits"]["timeout_seconds"], 2, "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_profile_tightens_one_program() {
    let t = Setup::new(&Options {
        extra: "[[terminal.rules]]\ncommand = \"sleep\"\nprofile = \"strict\"\n",
        ..Options::default()
    });
    let e = t.run(json!({"command": "sleep 0"})).await;
    assert_eq!(t.report(&e)["profile"], "strict", "{e}");
    assert_eq!(t.report(&e)["limits"]["network"], "off", "{e}");
    assert_eq!(t.report(&e)["limits"]["timeout_seconds"], 5, "{e}");
    let e = t.run(json!({"command": "true"})).await;
    assert_eq!(t.report(&e)["profile"], "standard", "{e}");
    // explain_command says the same, each program under its own profile, in any order
    // (its answer per profile is built once and reused).
    for (command, profile, network) in [
        ("true", "standard", "on"),
        ("sleep 0", "strict", "off"),
        ("true", "standard", "on"),
        ("sleep 1", "strict", "off"),
    ] {
        let x = t
            .core
            .explain_command(json!({ "command": command }).as_object());
        assert_eq!(x.detail["sandbox"]["profile"], profile, "{command}");
        assert_eq!(
            x.detail["sandbox"]["limits"]["network"], network,
            "{command}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn require_kernel_sandbox_turns_a_missing_mechanism_into_a_refusal() {
    // No cgroups: the process and memory limits have no mechanism.
    let t = Setup::new(&Options {
        cgroups: false,
        require: true,
        ..Options::default()
    });
    let marker = Marker::new();
    let e = t
        .run(json!({ "command": format!("touch ran-{}", marker.0) }))
        .await;
    assert_eq!(e["code"], "OPERATION_FAILED", "{e}");
    let reason = e["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("required"), "{e}");
    assert!(reason.contains("process limit"), "{e}");
    assert!(
        !t.jail().join(format!("ran-{}", marker.0)).exists(),
        "it ran"
    );
    assert!(
        e["detail"]["sandbox_report"]["downgrades"].is_array(),
        "{e}"
    );
    assert_eq!(e["detail"]["sandbox_report"], t.report(&e), "{e}");

    // The same host without `require`: it runs, and the result says what was missing.
    let t = Setup::new(&Options {
        cgroups: false,
        ..Options::default()
    });
    let e = t.run(json!({"command": "true"})).await;
    assert_eq!(e["code"], "OK", "{e}");
    // A downgrade is never silent: the result itself carries the whole report.
    let downgrades = e["detail"]["sandbox_report"]["downgrades"].to_string();
    assert!(downgrades.contains("process limit"), "{e}");
    assert!(downgrades.contains("RLIMIT_DATA"), "{e}");
    // ... and so does the audit record.
    let audit = std::fs::read_to_string(t.dir.path().join("state/audit.jsonl")).unwrap();
    let outcome = audit
        .lines()
        .rev()
        .find(|l| l.contains("\"outcome\""))
        .unwrap();
    assert!(outcome.contains("downgrades"), "{outcome}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_outside_the_read_paths_cannot_be_executed() {
    let t = Setup::new(&Options::default());
    if !t.has(
        Feature::Landlock,
        "a_program_outside_the_read_paths_cannot_be_executed",
    ) {
        return;
    }
    // bash is allowed, but a copy of it just outside the jail is neither readable nor
    // executable for the command.
    let outside = t.dir.path().join("outside-bin");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::copy("/bin/true", outside.join("mytrue")).unwrap();
    let e = t
        .run(json!({"command": "bash -c \"cd ..; cd outside-bin; ./mytrue\""}))
        .await;
    assert_eq!(e["code"], "OK", "{e}");
    assert_eq!(e["detail"]["exit_code"], 126, "{e}");
    assert!(
        e["detail"]["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("Permission denied"),
        "{e}"
    );
}

/// Root's command holds no capability: the launcher empties every set, the bounding set
/// included, so even root can neither use nor regain `CAP_CHOWN`, `CAP_SYS_ADMIN`, ...
/// (a user namespace mapping root to itself, which the launcher used before, would have
/// left it every capability over the files it can reach). The control run without the
/// sandbox shows the same `chown` succeeding.
#[tokio::test(flavor = "multi_thread")]
async fn the_command_holds_no_capabilities_even_as_root() {
    // capget(2) and prctl(PR_CAPBSET_READ / PR_CAP_AMBIENT_IS_SET) through ctypes (the
    // sandbox does not let the command read /proc), then a chown that needs CAP_CHOWN.
    const PROBE: &str = r#"python3 -c "import ctypes, os; l = ctypes.CDLL(None); h = (ctypes.c_uint32 * 2)(0x20080522, 0); d = (ctypes.c_uint32 * 6)(); l.syscall(125, h, d); print('sets', list(d)); print('bounding', sum(l.prctl(23, c, 0, 0, 0) == 1 for c in range(64))); print('ambient', sum(l.prctl(47, 1, c, 0, 0) == 1 for c in range(64))); exec(\"try:\\n os.chown('owned', 1, 1); print('chown done')\\nexcept PermissionError: print('chown refused')\")""#;
    let root = rustix::process::geteuid().is_root();
    let t = Setup::new(&Options::default());
    std::fs::write(t.jail().join("owned"), "x").unwrap();
    let e = t.run(json!({ "command": PROBE })).await;
    assert_eq!(e["detail"]["exit_code"], 0, "{e}");
    let out = e["detail"]["stdout"].as_str().unwrap_or_default();
    // effective, permitted, inheritable (two 32-bit words each) and the ambient set.
    assert!(out.contains("sets [0, 0, 0, 0, 0, 0]"), "{out}");
    assert!(out.contains("ambient 0"), "{out}");
    let held = &t.report(&e)["mechanisms"]["capabilities"];
    if !root {
        let message = "SKIPPED the root half of the_command_holds_no_capabilities_even_as_root: not running as root";
        if std::env::var_os("STRICT_SANDBOX_TESTS").is_some() {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!! {message} !!!!!!!!\n");
        assert_eq!(held, "none held", "{e}");
        return;
    }
    assert_eq!(held, "all dropped", "{e}");
    assert!(out.contains("bounding 0"), "bounding set not empty: {out}");
    assert!(out.contains("chown refused"), "{out}");

    // Without the sandbox a root server's command is not root either (it runs as the
    // jail's owner): no capability in its effective, permitted or ambient sets. Only the
    // bounding set is left full there (no launcher empties it), and no_new_privs is not
    // set, so that path is for benchmarks, and says so in every result.
    let off = Setup::new(&Options {
        enabled: false,
        ..Options::default()
    });
    std::fs::write(off.jail().join("owned"), "x").unwrap();
    let e = off.run(json!({ "command": PROBE })).await;
    let out = e["detail"]["stdout"].as_str().unwrap_or_default();
    assert!(out.contains("sets [0, 0, 0, 0, 0, 0]"), "{out}");
    assert!(out.contains("chown refused"), "{e}");
    assert!(!out.contains("bounding 0"), "{out}");
}
