//! The audited call, written once for every server: an intent record before anything
//! changes, the act, an outcome record, and the envelope that goes back.
//!
//! [`Recorder`] holds the audit log as the servers use it: opened at start-up (under
//! `audit_fail_mode = "closed"` a log that cannot be opened stops the start), and opened
//! again on the next record after an append failed (or, under "open", after it could not
//! be opened at start-up), so a log that cannot be written makes operations fail closed
//! instead of writing into a handle that no longer works.
//!
//! [`Call`] is one tool call in flight. Its intent record is fail-closed: under "closed" a
//! record that cannot be written refuses the operation (`AUDIT_UNAVAILABLE`) before it
//! starts; under "open" the call goes on and says so in `detail.audit`. For a command that
//! is prepared while the disk syncs ([`Call::intent_gated`]) the same rule is kept through
//! the start gate: the command waits before `execve` until the intent is durable. Finishing a
//! call ([`Call::finish`]) clips the reason (where the server bounds it), sets the duration,
//! writes the outcome record and turns the tool's typed detail into the wire envelope.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::audit::{AuditError, AuditLog};
use crate::config::{AuditFailMode, Config};
use crate::exec::GateOpener;
use crate::protocol;
use crate::redact::Redactor;
use crate::result::{Envelope, Recorded, ResultCode};

/// A record of the call could not be written; the text says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unrecorded(String, bool);

impl Unrecorded {
    /// The record is in the local log all the same (it did not reach syslog, which
    /// `required = true` makes a failure).
    fn kept(&self) -> bool {
        self.1
    }
}

impl From<AuditError> for Unrecorded {
    fn from(e: AuditError) -> Self {
        let kept = matches!(e, AuditError::NotShipped { .. });
        Unrecorded(e.to_string(), kept)
    }
}

/// When a record must be on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// `fdatasync` before the append returns: for calls that change something.
    Now,
    /// The line is written before the reply and synced behind it, grouped with others
    /// ([`AuditLog::append_sync_behind`]): for calls that change nothing.
    Behind,
}

/// The audit log of one server and how its calls are recorded.
#[derive(Debug)]
pub(crate) struct Recorder {
    config: Config,
    redactor: Arc<Redactor>,
    log: Mutex<Option<Arc<AuditLog>>>,
    /// Reasons are clipped to [`protocol::MAX_REASON_BYTES`] (else they are whole).
    reason_limit: bool,
}

impl Recorder {
    /// Open the configured log ([`AuditLog::open_for_server`]): an error under
    /// `audit_fail_mode = "closed"`; under "open" a log that cannot be opened now is tried
    /// again by the first record.
    pub(crate) fn open(config: &Config, redactor: Arc<Redactor>) -> Result<Recorder, AuditError> {
        let (log, _unavailable) = AuditLog::open_for_server(config, redactor.clone())?;
        Ok(Recorder {
            config: config.clone(),
            redactor,
            log: Mutex::new(log.map(Arc::new)),
            reason_limit: false,
        })
    }

    /// Clip every reason to [`protocol::MAX_REASON_BYTES`] (the terminal server's bound:
    /// a reason quotes the command, which can be long).
    pub(crate) fn clipping_reasons(mut self) -> Recorder {
        self.reason_limit = true;
        self
    }

    /// Whether a call goes on when its records cannot be written.
    pub(crate) fn fail_mode(&self) -> AuditFailMode {
        self.config.audit_fail_mode
    }

    /// Append one record that belongs to no call (e.g. a recovery at start-up).
    pub(crate) fn append(
        &self,
        record: Map<String, Value>,
        durability: Durability,
    ) -> Result<(), Unrecorded> {
        self.with_log(|log| match durability {
            Durability::Now => log.append(record),
            Durability::Behind => log.append_sync_behind(record),
        })
    }

    /// A call [`crate::callers::run_as`] did not let in (a tool outside the caller's
    /// subset, a limit reached): one record, and its envelope.
    pub(crate) fn refused(
        &self,
        tool: &str,
        arguments: Value,
        refusal: &crate::callers::Refusal,
    ) -> Envelope {
        let mut fields = Map::new();
        fields.insert("arguments".into(), arguments);
        self.call(tool, fields)
            .finish(refusal.envelope(tool), Map::new(), Durability::Behind)
    }

    /// A request the HTTP front refused before any tool saw it (no token, a wrong one, a
    /// foreign origin, a body over the bound).
    pub(crate) fn http_refused(&self, refusal: &crate::callers::HttpRefusal) {
        if let Err(e) = self.append(refusal.record(), Durability::Behind) {
            tracing::warn!("the refused HTTP request could not be recorded: {e}");
        }
    }

    /// What `detail.audit` says while records of this server do not reach syslog.
    fn shipping_note(&self) -> Option<String> {
        // Without `[audit.syslog]` no lock is taken after each append.
        self.config.audit_syslog.as_ref()?;
        let guard = self.log.lock().ok()?;
        guard.as_ref()?.unshipped().map(|u| format!("syslog: {u}"))
    }

    /// Start a call of `tool`; `fields` go into each of its records besides `tool` and
    /// `event` (its arguments, a request id).
    pub(crate) fn call<'a>(&'a self, tool: &str, fields: Map<String, Value>) -> Call<'a> {
        let mut fields = fields;
        fields.insert("tool".into(), Value::from(tool));
        // Over HTTP every record of the call names who made it.
        if let Some(caller) = crate::callers::current() {
            fields.insert("caller".into(), Value::from(caller.name()));
        }
        let mut secrets = Vec::new();
        if let Some(arguments) = fields.get("arguments") {
            collect_secrets(&self.redactor, arguments, &mut secrets);
        }
        Call {
            recorder: self,
            tool: tool.to_string(),
            fields,
            started: Instant::now(),
            note: None,
            intent_kept: false,
            secrets,
        }
    }

    fn with_log(
        &self,
        append: impl FnOnce(&AuditLog) -> Result<(), AuditError>,
    ) -> Result<(), Unrecorded> {
        let log = {
            let mut guard = self
                .log
                .lock()
                .map_err(|_| Unrecorded("audit log lock poisoned".into(), false))?;
            match guard.as_ref() {
                Some(log) => log.clone(),
                None => {
                    let log = Arc::new(AuditLog::open_configured(
                        &self.config,
                        self.redactor.clone(),
                    )?);
                    *guard = Some(log.clone());
                    log
                }
            }
        };
        append(&log).map_err(|e| {
            // Drop the handle so the next call reopens (the chain is re-read from disk);
            // except a log found replaced under the writer: reopening it here would start a
            // new chain with no trace of the gap, so every later call fails the same way.
            // Nor one whose record was written but not shipped: this writer keeps the
            // stretch that did not go, to record it once shipping works again.
            if !matches!(
                e,
                AuditError::Replaced { .. } | AuditError::NotShipped { .. }
            ) && let Ok(mut guard) = self.log.lock()
            {
                *guard = None;
            }
            Unrecorded::from(e)
        })
    }
}

/// The secrets in a call's arguments: in each string, and in each array of strings read as
/// one command line (an argv), where a rule may need the neighbouring element.
fn collect_secrets(redactor: &Redactor, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.extend(redactor.secrets_in(s)),
        Value::Array(items) => {
            let strings: Vec<String> = (items.iter())
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            if strings.len() > 1 {
                let line = strings.join(" ");
                out.extend(redactor.secrets_in(&line));
            }
            for item in items {
                collect_secrets(redactor, item, out);
            }
        }
        Value::Object(map) => {
            for v in map.values() {
                collect_secrets(redactor, v, out);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// An intent whose line is written while its `fdatasync` is still under way
/// ([`Call::intent_gated`]); [`Call::settle`] learns how the sync ended.
pub(crate) struct PendingIntent {
    synced: Arc<OnceLock<Result<(), crate::audit::SyncError>>>,
    gated: bool,
}

impl PendingIntent {
    /// Whether the act must wait at the gate: false when the line could not be written
    /// and the call goes on unrecorded (`audit_fail_mode = "open"`), so nothing opens it.
    pub(crate) fn gated(&self) -> bool {
        self.gated
    }
}

/// One tool call in flight: the fields of its records, its clock and the note for
/// `detail.audit` when one of its records is missing.
pub(crate) struct Call<'a> {
    recorder: &'a Recorder,
    tool: String,
    fields: Map<String, Value>,
    started: Instant,
    note: Option<String>,
    /// The intent failed but is in the local log (not shipped under `required`): a refusal
    /// still gets its outcome record, so no intent stands without one.
    intent_kept: bool,
    /// The secrets in the call's arguments, whose fragments a reason may quote.
    secrets: Vec<(String, String)>,
}

impl Call<'_> {
    /// The tool name the call's envelopes carry.
    pub(crate) fn tool(&self) -> &str {
        &self.tool
    }

    fn record(&self, event: &str, what: Map<String, Value>) -> Map<String, Value> {
        let mut record = what;
        record.extend(self.fields.clone());
        record.insert("event".into(), Value::from(event));
        record
    }

    /// A record written locally that did not reach syslog is said in `detail.audit`.
    fn note_shipping(&mut self) {
        if self.note.is_none() {
            self.note = self.recorder.shipping_note();
        }
    }

    /// Under "open" a missing record is noted (the first note is kept); under "closed" it
    /// is the caller's refusal.
    fn unrecorded(&mut self, e: Unrecorded) -> Result<(), Unrecorded> {
        match self.recorder.fail_mode() {
            AuditFailMode::Closed => Err(e),
            AuditFailMode::Open => {
                self.note.get_or_insert_with(|| format!("unavailable: {e}"));
                Ok(())
            }
        }
    }

    /// The intent record, durable before this returns. `Err` (under "closed" only): the
    /// record is missing and nothing may be done.
    pub(crate) fn intent(&mut self, what: Map<String, Value>) -> Result<(), Unrecorded> {
        let record = self.record("intent", what);
        match self.recorder.append(record, Durability::Now) {
            Ok(()) => {
                self.note_shipping();
                Ok(())
            }
            Err(e) => {
                self.intent_kept = e.kept();
                self.unrecorded(e)
            }
        }
    }

    /// The intent record, written now and synced while the act is prepared: `opener` lets
    /// the act start once the `fdatasync` succeeded (or, under "open", once it ended) and
    /// refuses it otherwise. `Err` (under "closed" only): the line could not be written.
    pub(crate) fn intent_gated(
        &mut self,
        what: Map<String, Value>,
        opener: GateOpener,
    ) -> Result<PendingIntent, Unrecorded> {
        let fail_open = self.recorder.fail_mode() == AuditFailMode::Open;
        let synced: Arc<OnceLock<Result<(), crate::audit::SyncError>>> = Arc::default();
        let told = synced.clone();
        let then = move |result: Result<(), crate::audit::SyncError>| {
            let ok = result.is_ok();
            let _ = told.set(result);
            if ok || fail_open {
                opener.open();
            } else {
                opener.refuse();
            }
        };
        let record = self.record("intent", what);
        match self.recorder.with_log(|log| log.append_then(record, then)) {
            Ok(()) => {
                self.note_shipping();
                Ok(PendingIntent {
                    synced,
                    gated: true,
                })
            }
            Err(e) => {
                self.intent_kept = e.kept();
                self.unrecorded(e).map(|()| PendingIntent {
                    synced,
                    gated: false,
                })
            }
        }
    }

    /// After the act of a gated intent: `Err` (under "closed" only) when its `fdatasync`
    /// failed, so the gate refused and nothing ran.
    pub(crate) fn settle(&mut self, pending: PendingIntent) -> Result<(), Unrecorded> {
        match pending.synced.get() {
            Some(Err(e)) => self.unrecorded(Unrecorded(e.to_string(), false)),
            _ => Ok(()),
        }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Remove every fragment of the arguments' secrets from the reason (it may quote an
    /// argument cut short, past what a rule recognises), clip it (where the server bounds
    /// it) and set the duration.
    fn close<D>(&self, mut env: Envelope<D>) -> Envelope<D> {
        if !self.secrets.is_empty() {
            env.reason = crate::redact::scrub_fragments(&env.reason, &self.secrets);
        }
        if self.recorder.reason_limit {
            env.reason = protocol::clip_reason(env.reason);
        }
        env.duration_ms = self.elapsed_ms();
        env
    }

    fn outcome_record<D>(&self, env: &Envelope<D>) -> Map<String, Value> {
        let mut what = Map::new();
        what.insert("code".into(), Value::from(env.code.as_str()));
        what.insert("reason".into(), Value::from(env.reason.clone()));
        what.insert("duration_ms".into(), Value::from(env.duration_ms));
        self.record("outcome", what)
    }

    /// The wire envelope, with the note of a missing record in `detail.audit`.
    fn wire<D: Serialize>(note: Option<String>, env: Envelope<D>) -> Envelope {
        env.map_detail(|fields| Recorded {
            fields,
            audit: note,
        })
        .into_wire()
    }

    /// Finish the call: the outcome record (with `kept`, what the record keeps of the
    /// detail: the tool decides, since a record may keep more than the wire carries, such as
    /// the whole sandbox report of a command) and the wire envelope. A missing outcome
    /// record is noted in `detail.audit`; the answer stands (what was done was done).
    pub(crate) fn finish<D: Serialize>(
        mut self,
        env: Envelope<D>,
        kept: Map<String, Value>,
        durability: Durability,
    ) -> Envelope {
        let env = self.close(env);
        let mut record = self.outcome_record(&env);
        let mut wire = Self::wire(None, env);
        record.extend(kept);
        match self.recorder.append(record, durability) {
            Ok(()) => self.note_shipping(),
            Err(e) => {
                self.note.get_or_insert_with(|| format!("unavailable: {e}"));
            }
        }
        if let Some(note) = self.note {
            wire.detail.insert("audit".into(), Value::from(note));
        }
        wire
    }

    /// Finish a call refused because its intent record could not be written: no outcome
    /// record either (it would fail the same way, and there is no intent to pair it with).
    pub(crate) fn finish_unrecorded<D: Serialize>(self, env: Envelope<D>) -> Envelope {
        let env = self.close(env);
        if self.intent_kept {
            // Its intent is in the local log: so is the refusal (best effort; it fails the
            // same way in syslog, and is noted there by the gap record).
            let record = self.outcome_record(&env);
            let _ = self.recorder.append(record, Durability::Now);
        }
        Self::wire(self.note, env)
    }

    /// Finish a call that changes nothing: one record after the fact. Under "closed" a call
    /// whose record cannot be written is not answered with data: `AUDIT_UNAVAILABLE` with
    /// `nothing_returned` as its reason.
    pub(crate) fn finish_read_only<D: Serialize>(
        mut self,
        env: Envelope<D>,
        nothing_returned: &str,
    ) -> Envelope {
        let env = self.close(env);
        let record = self.outcome_record(&env);
        match self.recorder.append(record, Durability::Now) {
            Ok(()) => Self::wire(self.note, env),
            Err(e) => match self.unrecorded(e) {
                Ok(()) => Self::wire(self.note, env),
                Err(_) => {
                    let mut refused =
                        Envelope::new(&self.tool, ResultCode::AuditUnavailable, nothing_returned);
                    refused.duration_ms = env.duration_ms;
                    refused
                }
            },
        }
    }
}
