//! Who is calling, over HTTP: every caller has a name, a token and limits of their own.
//!
//! A server started with `--transport http` admits a request only with
//! `Authorization: Bearer <token>` where the SHA-256 of the token is in the callers' token
//! file (`[http] tokens_file`; the tokens themselves are never stored). Each `[[caller]]`
//! entry names the caller and may narrow what it gets: a subset of the server's tools, a
//! stricter sandbox profile, a lower concurrency or rate. The file is read once at start-up
//! and only when it is a regular file owned by the server's user that no one else can read
//! or write ([`crate::config::read_owner_only`]).
//!
//! Per call the wiring asks [`run_as`]: a tool outside the caller's subset is refused
//! (`POLICY_DENIED`), a caller at its concurrency or rate limit is answered `BUSY` at once
//! (nothing queues, so one busy caller never holds up another), and while the call runs the
//! caller is the *current caller* of the task: the audit recorder writes its name into every
//! record of the call, and the terminal and guard cores run its commands under the
//! stricter of the rule's profile and the caller's (`tighten`).
//!
//! A request without a valid token never reaches a tool; [`HttpRefusal::record`] is the
//! audit record the server writes for it.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::config::{HttpSettings, Origin, OwnerOnlyError, parse_origin, read_owner_only};
use crate::exec::profile::{Profile, no_looser};
use crate::result::{Envelope, ResultCode};

/// The longest token file read.
const MAX_TOKENS_FILE_BYTES: u64 = 1 << 20;

/// The longest `Authorization` value looked at.
const MAX_AUTHORIZATION_BYTES: usize = 1024;

/// What a freshly made token starts with (so a leaked one is recognisable in a scan).
pub const TOKEN_PREFIX: &str = "smcp_";

/// The callers' token file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallersError {
    /// `[http] tokens_file` is not set.
    #[error(
        "--transport http needs [http] tokens_file: the callers' token file (make a token with `safe-mcp token --name NAME`)"
    )]
    NoTokensFile,
    /// The file could not be read, or is not owner-only.
    #[error(
        "tokens file '{path}': {why} (it must be a regular file owned by the server's user that no one else can read or write: chmod 600)"
    )]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// The file is not a valid token file.
    #[error("tokens file '{path}': {why}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

/// One `[[caller]]` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallerEntry {
    name: String,
    token_sha256: String,
    #[serde(default)]
    tools: Option<Vec<String>>,
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    max_concurrent: Option<u32>,
    #[serde(default)]
    calls_per_minute: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    caller: Vec<CallerEntry>,
}

/// A caller's rate: a bucket of `capacity` calls that refills evenly over a minute.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

#[derive(Debug)]
struct CallerInner {
    name: String,
    tools: Option<BTreeSet<String>>,
    profile: Option<Profile>,
    slots: Arc<tokio::sync::Semaphore>,
    max_concurrent: u32,
    per_minute: u32,
    bucket: Mutex<Bucket>,
}

/// An authenticated caller (cheap to clone: one shared record, its limits with it).
#[derive(Debug, Clone)]
pub struct Caller(Arc<CallerInner>);

impl Caller {
    /// The caller's name, as every audit record of its calls carries it.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The stricter profile its commands run under at least, if any.
    pub fn profile(&self) -> Option<Profile> {
        self.0.profile
    }

    /// Whether `tool` is one this caller may list and call.
    pub fn may_use(&self, tool: &str) -> bool {
        self.0.tools.as_ref().is_none_or(|t| t.contains(tool))
    }

    /// Take one of the caller's slots and one call from its rate bucket, or say why not.
    fn admit(&self, tool: &str) -> Result<Admission, Refusal> {
        if !self.may_use(tool) {
            return Err(Refusal {
                code: ResultCode::PolicyDenied,
                reason: format!(
                    "caller '{}' may not use '{tool}' (its entry in the tokens file names the tools it may use)",
                    self.name()
                ),
            });
        }
        let permit = self.0.slots.clone().try_acquire_owned().map_err(|_| Refusal {
            code: ResultCode::Busy,
            reason: format!(
                "caller '{}' already has {} calls running (its limit); nothing ran: try again when one has finished",
                self.name(),
                self.0.max_concurrent
            ),
        })?;
        if self.0.per_minute > 0 {
            let capacity = f64::from(self.0.per_minute);
            let mut bucket = self.0.bucket.lock().map_err(|_| Refusal {
                code: ResultCode::InternalError,
                reason: "the caller's rate state is poisoned".into(),
            })?;
            let now = Instant::now();
            let refill = now.duration_since(bucket.at).as_secs_f64() * capacity / 60.0;
            bucket.tokens = (bucket.tokens + refill).min(capacity);
            bucket.at = now;
            if bucket.tokens < 1.0 {
                let wait = ((1.0 - bucket.tokens) * 60.0 / capacity * 1000.0).ceil();
                return Err(Refusal {
                    code: ResultCode::Busy,
                    reason: format!(
                        "caller '{}' is over its rate of {} calls per minute; nothing ran: try again in {wait} ms",
                        self.name(),
                        self.0.per_minute
                    ),
                });
            }
            bucket.tokens -= 1.0;
        }
        Ok(Admission { _slot: permit })
    }
}

/// A call let in: holds the caller's slot until dropped.
#[derive(Debug)]
pub struct Admission {
    _slot: tokio::sync::OwnedSemaphorePermit,
}

/// Why a call of an authenticated caller was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `POLICY_DENIED` (a tool outside its subset) or `BUSY` (a limit).
    pub code: ResultCode,
    /// What to tell the caller.
    pub reason: String,
}

impl Refusal {
    /// The envelope of the refused call.
    pub fn envelope(&self, tool: &str) -> Envelope {
        Envelope::new(tool, self.code, self.reason.clone())
    }
}

/// The callers of one server, by the SHA-256 of their tokens.
#[derive(Debug)]
pub struct Callers {
    by_hash: HashMap<[u8; 32], Caller>,
}

/// Why a request was not let in at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization` header.
    Missing,
    /// Not `Bearer <token>`.
    Malformed,
    /// A token that is not in the file.
    Unknown,
}

impl AuthFailure {
    /// Said in the audit record and the 401's body.
    pub fn reason(self) -> &'static str {
        match self {
            AuthFailure::Missing => "no bearer token",
            AuthFailure::Malformed => "the Authorization header is not 'Bearer <token>'",
            AuthFailure::Unknown => "the token is not one of this server's callers",
        }
    }
}

/// The SHA-256 of a token, as the tokens file holds it (64 lower-case hex digits).
pub fn token_sha256(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new random token: [`TOKEN_PREFIX`] and 32 bytes from the OS, base64url.
pub fn new_token() -> Result<String, std::io::Error> {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    Ok(format!("{TOKEN_PREFIX}{text}"))
}

/// The `[[caller]]` stanza for a token (what `safe-mcp token` prints).
pub fn caller_stanza(name: &str, token: &str) -> String {
    format!(
        "[[caller]]\nname = \"{name}\"\ntoken_sha256 = \"{}\"\n",
        token_sha256(token)
    )
}

/// Whether `name` is a valid caller name: 1 to 64 of `A-Za-z0-9._@-`.
pub fn valid_caller_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '@'))
}

impl Callers {
    /// Read `[http] tokens_file`; `tools` are the tool names an entry may name (another name
    /// is an error: a typo would otherwise hide a tool from a caller silently).
    pub fn load(settings: &HttpSettings, tools: &[&str]) -> Result<Callers, CallersError> {
        let path = settings
            .tokens_file
            .as_deref()
            .ok_or(CallersError::NoTokensFile)?;
        let text =
            read_owner_only(path, MAX_TOKENS_FILE_BYTES).map_err(|e| CallersError::Unreadable {
                path: path.to_path_buf(),
                why: match e {
                    OwnerOnlyError::Io(e) => e.to_string(),
                    OwnerOnlyError::Exposed(what) => format!("it is {what}"),
                },
            })?;
        Self::parse(&text, path, settings, tools)
    }

    fn parse(
        text: &str,
        path: &Path,
        settings: &HttpSettings,
        tools: &[&str],
    ) -> Result<Callers, CallersError> {
        let invalid = |why: String| CallersError::Invalid {
            path: path.to_path_buf(),
            why,
        };
        let file: TokensFile = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if file.caller.is_empty() {
            return Err(invalid(
                "no [[caller]] entry: no one could call this server".into(),
            ));
        }
        let mut by_hash = HashMap::new();
        let mut names = BTreeSet::new();
        for entry in file.caller {
            let name = entry.name;
            if !valid_caller_name(&name) {
                return Err(invalid(format!(
                    "caller name '{name}' must be 1 to 64 of A-Z a-z 0-9 . _ @ -"
                )));
            }
            if !names.insert(name.clone()) {
                return Err(invalid(format!("caller '{name}' is named twice")));
            }
            let hash = decode_hash(&entry.token_sha256).ok_or_else(|| {
                invalid(format!(
                    "caller '{name}': token_sha256 must be 64 lower-case hex digits (the SHA-256 of the token, never the token)"
                ))
            })?;
            let subset = match entry.tools {
                Some(list) => {
                    if let Some(unknown) = list.iter().find(|t| !tools.contains(&t.as_str())) {
                        return Err(invalid(format!(
                            "caller '{name}': no safe-mcp server has a tool '{unknown}' (the tools are {})",
                            tools.join(", ")
                        )));
                    }
                    Some(list.into_iter().collect::<BTreeSet<_>>())
                }
                None => None,
            };
            // A caller's own limits may only be lower than the server's.
            let max_concurrent = entry
                .max_concurrent
                .unwrap_or(settings.max_concurrent_per_caller);
            if max_concurrent == 0 || max_concurrent > settings.max_concurrent_per_caller {
                return Err(invalid(format!(
                    "caller '{name}': max_concurrent must be 1 to [http] max_concurrent_per_caller ({})",
                    settings.max_concurrent_per_caller
                )));
            }
            let per_minute = entry.calls_per_minute.unwrap_or(settings.calls_per_minute);
            if settings.calls_per_minute > 0
                && (per_minute == 0 || per_minute > settings.calls_per_minute)
            {
                return Err(invalid(format!(
                    "caller '{name}': calls_per_minute must be 1 to [http] calls_per_minute ({})",
                    settings.calls_per_minute
                )));
            }
            let caller = Caller(Arc::new(CallerInner {
                name: name.clone(),
                tools: subset,
                profile: entry.profile,
                slots: Arc::new(tokio::sync::Semaphore::new(
                    usize::try_from(max_concurrent).unwrap_or(1),
                )),
                max_concurrent,
                per_minute,
                bucket: Mutex::new(Bucket {
                    tokens: f64::from(per_minute),
                    at: Instant::now(),
                }),
            }));
            if by_hash.insert(hash, caller).is_some() {
                return Err(invalid(format!(
                    "caller '{name}' has the same token as another caller"
                )));
            }
        }
        Ok(Callers { by_hash })
    }

    /// Tool calls of all callers running now.
    pub fn in_flight(&self) -> usize {
        (self.by_hash.values())
            .map(|c| {
                let max = usize::try_from(c.0.max_concurrent).unwrap_or(usize::MAX);
                max.saturating_sub(c.0.slots.available_permits())
            })
            .sum()
    }

    /// How many callers there are.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// Whether there are none (never, once loaded).
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// The caller whose token the `Authorization` header carries.
    pub fn authenticate(&self, authorization: Option<&[u8]>) -> Result<Caller, AuthFailure> {
        let value = authorization.ok_or(AuthFailure::Missing)?;
        if value.len() > MAX_AUTHORIZATION_BYTES {
            return Err(AuthFailure::Malformed);
        }
        let value = std::str::from_utf8(value).map_err(|_| AuthFailure::Malformed)?;
        let (scheme, token) = value.split_once(' ').ok_or(AuthFailure::Malformed)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(AuthFailure::Malformed);
        }
        let token = token.trim_matches(' ');
        if token.is_empty() {
            return Err(AuthFailure::Malformed);
        }
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.by_hash.get(&hash).cloned().ok_or(AuthFailure::Unknown)
    }
}

fn decode_hash(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || text.chars().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    hex::decode(text).ok()?.try_into().ok()
}

/// Whether an `Origin` header may call: absent (not a browser) or one of `[http]
/// allowed_origins`. `Err` with the reason for the 403.
pub fn check_origin(allowed: &[String], origin: Option<&[u8]>) -> Result<(), String> {
    let Some(origin) = origin else {
        return Ok(());
    };
    let text =
        std::str::from_utf8(origin).map_err(|_| "the Origin header is not text".to_string())?;
    let Ok(seen) = parse_origin(text, false) else {
        return Err(format!("origin '{}' is not allowed", text.escape_default()));
    };
    let matches = |pattern: &Origin| {
        pattern.scheme == seen.scheme
            && pattern.host == seen.host
            && pattern.port.is_none_or(|p| Some(p) == seen.port)
    };
    if allowed
        .iter()
        .filter_map(|a| parse_origin(a, true).ok())
        .any(|p| matches(&p))
    {
        Ok(())
    } else {
        Err(format!("origin '{text}' is not in [http] allowed_origins"))
    }
}

/// Whether the `Host` header names this server: one of `allowed` (`name`: any port;
/// `name:port`: that port), compared without case. `Err` with the reason for the 403
/// (DNS rebinding: a page on a name the attacker controls that resolves to this address).
pub fn check_host(allowed: &[String], hosts: &[&[u8]]) -> Result<(), String> {
    let [host] = hosts else {
        return Err(format!("{} Host headers: one is required", hosts.len()));
    };
    let text = std::str::from_utf8(host).map_err(|_| "the Host header is not text".to_string())?;
    let text = text.to_ascii_lowercase();
    let (name, port) = match text.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((addr, rest)) => (addr.to_string(), rest.strip_prefix(':')),
            None => return Err(format!("Host '{}' is not allowed", text.escape_default())),
        },
        None => match text.rsplit_once(':') {
            Some((n, p)) => (n.to_string(), Some(p)),
            None => (text.clone(), None),
        },
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return Err(format!("Host '{}' is not allowed", text.escape_default()));
    }
    let matches = |entry: &String| {
        let entry = entry.to_ascii_lowercase();
        let entry = entry.trim_start_matches('[').replace(']', "");
        match (entry.rsplit_once(':'), port) {
            // `name:port`, not a bare IPv6 address.
            (Some((n, p)), Some(q))
                if p.bytes().all(|b| b.is_ascii_digit()) && !n.contains(':') =>
            {
                n == name && p == q
            }
            _ => entry == name,
        }
    };
    if allowed.iter().any(matches) {
        Ok(())
    } else {
        Err(format!(
            "Host '{}' is not one this server answers to ([http] allowed_hosts)",
            text.escape_default()
        ))
    }
}

/// An audit record about refused requests, made only by a [`RefusalLedger`]: the record of
/// one, or the count of those not written one by one.
#[derive(Debug, Clone)]
pub struct RefusalRecord(Map<String, Value>);

impl RefusalRecord {
    /// The record's fields.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.0
    }

    pub(crate) fn into_fields(self) -> Map<String, Value> {
        self.0
    }
}

/// How many refused requests a server records one by one each minute; past that they are
/// counted, and one record says how many were not written ([`RefusalLedger`]).
pub const REFUSALS_RECORDED_PER_MINUTE: u64 = 120;

/// Bounds what refused requests write to the audit log: a flood of bad requests from anyone
/// who can reach the port would otherwise grow it without limit. Every refusal is accounted
/// for: written, or counted in an `http_refused_unrecorded` record when the next minute
/// begins (or when the server stops).
#[derive(Debug)]
pub struct RefusalLedger {
    state: Mutex<Ledger>,
}

#[derive(Debug)]
struct Ledger {
    since: Instant,
    since_ts: String,
    recorded: u64,
    unrecorded: std::collections::BTreeMap<u16, u64>,
}

fn now_ts() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

impl Default for RefusalLedger {
    fn default() -> Self {
        RefusalLedger {
            state: Mutex::new(Ledger {
                since: Instant::now(),
                since_ts: now_ts(),
                recorded: 0,
                unrecorded: std::collections::BTreeMap::new(),
            }),
        }
    }
}

impl RefusalLedger {
    /// The records to write for `refusal`: the count of the last minute's unrecorded ones
    /// when a new minute begins, then the refusal itself while this minute has room.
    pub fn note(&self, refusal: &HttpRefusal) -> Vec<RefusalRecord> {
        let Ok(mut ledger) = self.state.lock() else {
            return vec![RefusalRecord(refusal.record())];
        };
        let mut out = Vec::new();
        if ledger.since.elapsed() >= std::time::Duration::from_secs(60) {
            out.extend(ledger.summary());
            ledger.since = Instant::now();
            ledger.since_ts = now_ts();
            ledger.recorded = 0;
        }
        if ledger.recorded < REFUSALS_RECORDED_PER_MINUTE {
            ledger.recorded += 1;
            out.push(RefusalRecord(refusal.record()));
        } else {
            *ledger.unrecorded.entry(refusal.status).or_insert(0) += 1;
        }
        out
    }

    /// The count of the refusals not yet accounted for, if any (when the server stops).
    pub fn flush(&self) -> Option<RefusalRecord> {
        self.state.lock().ok()?.summary()
    }
}

impl Ledger {
    fn summary(&mut self) -> Option<RefusalRecord> {
        if self.unrecorded.is_empty() {
            return None;
        }
        let counts = std::mem::take(&mut self.unrecorded);
        let mut record = Map::new();
        record.insert("event".into(), json!("http_refused_unrecorded"));
        record.insert("count".into(), json!(counts.values().sum::<u64>()));
        record.insert(
            "statuses".into(),
            Value::Object(
                counts
                    .iter()
                    .map(|(status, n)| (status.to_string(), json!(n)))
                    .collect(),
            ),
        );
        record.insert("from".into(), json!(self.since_ts));
        record.insert("to".into(), json!(now_ts()));
        Some(RefusalRecord(record))
    }
}

/// A request the HTTP front refused before any tool saw it.
#[derive(Debug, Clone)]
pub struct HttpRefusal {
    /// The HTTP status answered (401, 403, 413, ...).
    pub status: u16,
    /// Why.
    pub reason: String,
    /// The peer's address.
    pub remote: String,
    /// The caller, when the token was valid (a 413 of a known caller).
    pub caller: Option<String>,
}

impl HttpRefusal {
    /// The audit record: `event: "http_refused"`, the status, the reason and the peer.
    pub fn record(&self) -> Map<String, Value> {
        let mut record = Map::new();
        record.insert("event".into(), json!("http_refused"));
        record.insert("status".into(), json!(self.status));
        record.insert("reason".into(), json!(self.reason));
        record.insert("remote".into(), json!(self.remote));
        if let Some(caller) = &self.caller {
            record.insert("caller".into(), json!(caller));
        }
        record
    }
}

tokio::task_local! {
    static CURRENT: Option<Caller>;
}

thread_local! {
    static CURRENT_ON_THREAD: RefCell<Option<Caller>> = const { RefCell::new(None) };
}

/// The caller of the call this task or thread is running, if it came over HTTP.
pub(crate) fn current() -> Option<Caller> {
    CURRENT
        .try_with(Clone::clone)
        .ok()
        .flatten()
        .or_else(|| CURRENT_ON_THREAD.with(|c| c.borrow().clone()))
}

/// Run `f` on this thread with `caller` as the current caller (a blocking part of a call).
pub fn on_thread<R>(caller: Option<Caller>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Caller>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            CURRENT_ON_THREAD.with(|c| *c.borrow_mut() = before);
        }
    }
    let before = CURRENT_ON_THREAD.with(|c| c.replace(caller));
    let _restore = Restore(before);
    f()
}

/// One tool call of `caller` (`None`: a stdio client, whoever started the server): a tool
/// outside its subset or a limit reached answers `refuse(refusal)` and runs nothing;
/// otherwise `call` runs with the caller current (its records name it, its commands run no
/// looser than its profile) and holding one of its slots.
pub async fn run_as<F, R>(caller: Option<Caller>, tool: &str, call: F, refuse: R) -> Envelope
where
    F: Future<Output = Envelope>,
    R: FnOnce(Refusal) -> Envelope,
{
    let admission = match caller.as_ref().map(|c| c.admit(tool)).transpose() {
        Ok(admission) => admission,
        Err(refusal) => return CURRENT.scope(caller, async { refuse(refusal) }).await,
    };
    let envelope = CURRENT.scope(caller, call).await;
    drop(admission);
    envelope
}

/// Whether the current caller may list `tool` (every tool for a stdio client).
pub fn may_use(caller: Option<&Caller>, tool: &str) -> bool {
    caller.is_none_or(|c| c.may_use(tool))
}

/// `profile`, or the current caller's profile where that is stricter.
pub(crate) fn tighten(profile: Profile) -> Profile {
    match current().and_then(|c| c.profile()) {
        Some(theirs) if no_looser(theirs, profile) => theirs,
        _ => profile,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> HttpSettings {
        HttpSettings {
            max_concurrent_per_caller: 2,
            calls_per_minute: 3,
            ..HttpSettings::default()
        }
    }

    fn callers(text: &str) -> Result<Callers, CallersError> {
        Callers::parse(
            text,
            Path::new("/t"),
            &settings(),
            &["run_command", "explain_command"],
        )
    }

    fn entry(name: &str, token: &str, extra: &str) -> String {
        format!("{}{extra}\n", caller_stanza(name, token))
    }

    #[test]
    fn a_known_token_names_its_caller_and_anything_else_is_refused() {
        let c = callers(&(entry("alice", "tok-a", "") + &entry("bob", "tok-b", ""))).unwrap();
        let auth = |v: &str| {
            c.authenticate(Some(v.as_bytes()))
                .map(|c| c.name().to_string())
        };
        assert_eq!(auth("Bearer tok-a").unwrap(), "alice");
        assert_eq!(auth("bearer tok-b").unwrap(), "bob");
        assert_eq!(auth("Bearer tok-c"), Err(AuthFailure::Unknown));
        assert_eq!(auth("Basic dG9rLWE="), Err(AuthFailure::Malformed));
        assert_eq!(auth("Bearer "), Err(AuthFailure::Malformed));
        assert_eq!(auth("tok-a"), Err(AuthFailure::Malformed));
        assert_eq!(c.authenticate(None).map(|_| ()), Err(AuthFailure::Missing));
        // The hash of a token is not a token.
        assert_eq!(
            auth(&format!("Bearer {}", token_sha256("tok-a"))),
            Err(AuthFailure::Unknown)
        );
    }

    #[test]
    fn a_bad_entry_is_an_error_not_a_caller_less_server() {
        let bad = |text: &str, says: &str| {
            let e = callers(text).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        };
        bad("", "no [[caller]]");
        bad(&entry("a b", "t", ""), "caller name");
        bad(&(entry("a", "t", "") + &entry("a", "u", "")), "named twice");
        bad(&(entry("a", "t", "") + &entry("b", "t", "")), "same token");
        bad(
            "[[caller]]\nname = \"a\"\ntoken_sha256 = \"tok\"\n",
            "64 lower-case hex",
        );
        bad(
            &format!(
                "[[caller]]\nname = \"a\"\ntoken_sha256 = \"{}\"\n",
                token_sha256("t").to_uppercase()
            ),
            "64 lower-case hex",
        );
        bad(&entry("a", "t", "tools = [\"rm\"]"), "has a tool 'rm'");
        bad(
            &entry("a", "t", "max_concurrent = 3"),
            "max_concurrent must be 1 to",
        );
        bad(
            &entry("a", "t", "calls_per_minute = 0"),
            "calls_per_minute must be 1 to",
        );
        bad(&entry("a", "t", "token = \"t\""), "unknown field");
    }

    #[test]
    fn the_subset_the_concurrency_and_the_rate_are_each_enforced() {
        let c = callers(
            &(entry("alice", "a", "tools = [\"explain_command\"]") + &entry("bob", "b", "")),
        )
        .unwrap();
        let alice = c.authenticate(Some(b"Bearer a")).unwrap();
        let bob = c.authenticate(Some(b"Bearer b")).unwrap();
        let refused = alice.admit("run_command").unwrap_err();
        assert_eq!(refused.code, ResultCode::PolicyDenied);
        assert!(alice.may_use("explain_command") && !alice.may_use("run_command"));
        // Two slots: a third call at once is BUSY; alice's slots are not bob's.
        let one = bob.admit("run_command").unwrap();
        let two = bob.admit("run_command").unwrap();
        let busy = bob.admit("run_command").unwrap_err();
        assert_eq!(busy.code, ResultCode::Busy);
        assert!(busy.reason.contains("2 calls running"), "{}", busy.reason);
        assert!(alice.admit("explain_command").is_ok());
        drop((one, two));
        // Three per minute: bob used two, one is left, then the bucket is empty.
        assert!(bob.admit("run_command").is_ok());
        let rate = bob.admit("run_command").unwrap_err();
        assert_eq!(rate.code, ResultCode::Busy);
        assert!(
            rate.reason.contains("3 calls per minute"),
            "{}",
            rate.reason
        );
    }

    #[test]
    fn origins_match_scheme_host_and_port() {
        let allowed = vec![
            "https://app.example".to_string(),
            "http://localhost:*".to_string(),
        ];
        let check = |o: &str| check_origin(&allowed, Some(o.as_bytes()));
        assert!(check_origin(&allowed, None).is_ok());
        assert!(check("https://app.example").is_ok());
        assert!(check("https://APP.example:443").is_ok());
        assert!(check("http://localhost:5173").is_ok());
        assert!(check("https://app.example:8443").is_err());
        assert!(check("http://app.example").is_err());
        assert!(check("https://app.example.evil").is_err());
        assert!(check("null").is_err());
        assert!(check_origin(&[], Some(b"http://localhost:3000")).is_err());
    }

    #[test]
    fn hosts_match_a_name_or_a_name_and_port() {
        let allowed: Vec<String> = ["localhost", "127.0.0.1", "::1", "mcp.example:8443"]
            .iter()
            .map(|h| h.to_string())
            .collect();
        let check = |h: &str| check_host(&allowed, &[h.as_bytes()]);
        for good in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "[::1]:8080",
            "mcp.example:8443",
        ] {
            assert!(check(good).is_ok(), "{good}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.",
            "127.1",
            "mcp.example:443",
            "mcp.example",
            "x.localhost",
            "127.0.0.1:",
            "127.0.0.1:8x",
            "[::1",
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
        assert!(check_host(&allowed, &[]).is_err());
        assert!(check_host(&allowed, &[b"localhost", b"evil.example"]).is_err());
    }

    #[test]
    fn past_the_minutes_budget_refusals_are_counted_not_written() {
        let ledger = RefusalLedger::default();
        let refusal = |status| HttpRefusal {
            status,
            reason: "no bearer token".into(),
            remote: "127.0.0.1:1".into(),
            caller: None,
        };
        let mut written = 0;
        for i in 0..REFUSALS_RECORDED_PER_MINUTE + 30 {
            let status = if i % 2 == 0 { 401 } else { 403 };
            written += ledger.note(&refusal(status)).len();
        }
        assert_eq!(written as u64, REFUSALS_RECORDED_PER_MINUTE);
        let summary = ledger.flush().unwrap();
        let summary = summary.fields();
        assert_eq!(summary["event"], "http_refused_unrecorded");
        assert_eq!(summary["count"], 30);
        assert_eq!(summary["statuses"], json!({"401": 15, "403": 15}));
        assert!(ledger.flush().is_none());
    }

    #[tokio::test]
    async fn the_current_caller_and_its_profile_are_set_only_inside_the_call() {
        let c = callers(&entry("carol", "c", "profile = \"strict\"")).unwrap();
        let carol = c.authenticate(Some(b"Bearer c")).unwrap();
        assert!(current().is_none());
        let seen = run_as(
            Some(carol.clone()),
            "run_command",
            async {
                let name = current().map(|c| c.name().to_string()).unwrap_or_default();
                assert_eq!(tighten(Profile::Permissive), Profile::Strict);
                Envelope::new("run_command", ResultCode::Ok, name)
            },
            |r| r.envelope("run_command"),
        )
        .await;
        assert_eq!(seen.reason, "carol");
        assert!(current().is_none());
        assert_eq!(tighten(Profile::Permissive), Profile::Permissive);
        let on = on_thread(Some(carol), || current().map(|c| c.name().to_string()));
        assert_eq!(on.as_deref(), Some("carol"));
        assert!(current().is_none());
    }

    #[test]
    fn new_tokens_differ_and_their_stanza_authenticates() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() > 40);
        let c = callers(&caller_stanza("dave", &a)).unwrap();
        assert_eq!(
            c.authenticate(Some(format!("Bearer {a}").as_bytes()))
                .unwrap()
                .name(),
            "dave"
        );
    }
}
