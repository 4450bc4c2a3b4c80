//! `--transport http`: a server's MCP surface on rmcp's Streamable HTTP service, behind a
//! front that lets in only named callers.
//!
//! Each request, in order: the path must be `/mcp` (404); an `Origin` header must be one of
//! `[http] allowed_origins` (403, the MCP rule against DNS rebinding; rmcp checks `Host` as
//! well); the bearer token must be a caller's ([`safety::callers::Callers::authenticate`],
//! 401 with `WWW-Authenticate`); the body must fit `[http] max_body_bytes` (413). Each
//! refusal is an audit record of the server's own log. Only then does rmcp see the request,
//! with the caller in its extensions, where the wiring finds it for
//! [`safety::callers::run_as`]: the caller's tool subset, limits and profile, and its name in
//! every record of the call.
//!
//! The service is stateless (no `Mcp-Session-Id`), so every call stands alone and a client
//! that goes away cancels its request: rmcp cancels the call's token and the core kills the
//! command's process tree. Loopback by default; any other address needs `--tls-cert` and
//! `--tls-key` (rustls) or `--behind-proxy`. SIGTERM and SIGINT stop accepting, let calls
//! in flight finish (up to [`DRAIN`]), and end the server as a closed stdin does, with its
//! closing audit checkpoint.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use safety::callers::{AuthFailure, Callers, HttpRefusal, RefusalLedger, check_host, check_origin};
use safety::config::HttpSettings;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_util::sync::CancellationToken;

/// The one path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// How long a stopping server waits for calls in flight.
pub const DRAIN: Duration = Duration::from_secs(10);

/// How long a client may take to send a request's head, or to finish a TLS handshake.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a caller may take to send a request's body.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// After the drain, how long the calls cancelled then may take to kill their commands and
/// write their outcome records.
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// Connections served at once; more wait in the kernel's backlog.
const MAX_CONNECTIONS: usize = 512;

/// The longest TLS certificate chain file read.
const MAX_PEM_BYTES: u64 = 1 << 20;

type Body = BoxBody<Bytes, Infallible>;

/// How the server listens.
#[derive(Debug, Clone)]
pub struct Options {
    /// `IP:port` (port 0: one the kernel picks; the log line names it).
    pub listen: SocketAddr,
    /// `--tls-cert` and `--tls-key`.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--behind-proxy`: a non-loopback address without TLS, for a proxy that terminates it.
    pub behind_proxy: bool,
}

/// What the front records with the server's own audit log: one record of a refused request
/// (or the count of those not written one by one).
pub type RefusalSink = Arc<dyn Fn(safety::callers::RefusalRecord) + Send + Sync>;

/// The server could not listen or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The options are unsafe or inconsistent.
    #[error("{0}")]
    Options(String),
    /// The TLS certificate or key could not be used.
    #[error("TLS: {0}")]
    Tls(String),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// Check the options before anything is opened: a non-loopback address must carry TLS or
/// say it is behind a proxy.
pub fn check_options(options: &Options) -> Result<(), HttpError> {
    let loopback = options.listen.ip().is_loopback();
    if !loopback && options.tls.is_none() && !options.behind_proxy {
        return Err(HttpError::Options(format!(
            "{} is not a loopback address: bearer tokens would cross the network in clear text. \
             Give --tls-cert and --tls-key, or --behind-proxy when a reverse proxy on this host \
             terminates TLS",
            options.listen
        )));
    }
    if options.tls.is_some() && options.behind_proxy {
        return Err(HttpError::Options(
            "--behind-proxy and --tls-cert/--tls-key exclude each other".into(),
        ));
    }
    Ok(())
}

/// The rustls server configuration of `--tls-cert` (a PEM chain) and `--tls-key` (a PEM
/// private key, only the server's user may read it).
fn tls_config(cert: &Path, key: &Path) -> Result<rustls::ServerConfig, HttpError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |what: &Path, why: String| HttpError::Tls(format!("'{}': {why}", what.display()));
    let chain = std::fs::read(cert).map_err(|e| bad(cert, e.to_string()))?;
    if u64::try_from(chain.len()).unwrap_or(u64::MAX) > MAX_PEM_BYTES {
        return Err(bad(cert, "longer than 1 MiB".into()));
    }
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&chain)
        .collect::<Result<_, _>>()
        .map_err(|e| bad(cert, format!("not a PEM certificate chain: {e}")))?;
    if certs.is_empty() {
        return Err(bad(cert, "holds no certificate".into()));
    }
    let key_text = safety::config::read_owner_only(key, MAX_PEM_BYTES).map_err(|e| {
        bad(
            key,
            format!("{e} (a private key must be a regular file only the server's user can read: chmod 600)"),
        )
    })?;
    let private = PrivateKeyDer::from_pem_slice(key_text.as_bytes())
        .map_err(|e| bad(key, format!("not a PEM private key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| HttpError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| HttpError::Tls(format!("the key does not fit the certificate: {e}")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// rmcp's configuration: stateless, JSON answers where no notification comes first, the
/// loopback names and `[http] allowed_hosts` for `Host`, the same origins the front
/// checks, the same body bound.
fn rmcp_config(
    settings: &HttpSettings,
    hosts: Vec<String>,
    cancel: CancellationToken,
) -> StreamableHttpServerConfig {
    let max_body = usize::try_from(settings.max_body_bytes).unwrap_or(usize::MAX);
    StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(hosts)
        .with_allowed_origins(settings.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(max_body)
        .with_cancellation_token(cancel)
}

/// The `Host` names answered: the loopback names, the listen address, `[http] allowed_hosts`.
fn allowed_hosts(settings: &HttpSettings, listen: SocketAddr) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
        .iter()
        .map(|h| (*h).to_string())
        .collect();
    if !listen.ip().is_unspecified() {
        hosts.push(listen.ip().to_string());
    }
    hosts.extend(settings.allowed_hosts.iter().cloned());
    hosts
}

/// What every connection's requests share.
struct Front<S: ServerHandler + Clone + Send + Sync + 'static> {
    callers: Callers,
    settings: HttpSettings,
    hosts: Vec<String>,
    record: RefusalSink,
    ledger: RefusalLedger,
    service: StreamableHttpService<S, LocalSessionManager>,
}

/// A refusal's answer: `status`, and a JSON-RPC error with the reason as its body (an SDK
/// shows a JSON-RPC error's message; a plain-text body it would replace with a generic one).
fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": text},
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

impl<S: ServerHandler + Clone + Send + Sync + 'static> Front<S> {
    fn refuse(
        &self,
        status: StatusCode,
        reason: &str,
        remote: SocketAddr,
        caller: Option<&str>,
    ) -> Response<Body> {
        let refusal = HttpRefusal {
            status: status.as_u16(),
            reason: reason.to_string(),
            remote: remote.to_string(),
            caller: caller.map(str::to_string),
        };
        for record in self.ledger.note(&refusal) {
            (self.record)(record);
        }
        // A refused request's connection is not kept: its body is not read, and a peer
        // without a token holds a connection slot no longer than one request head.
        let mut response = plain(status, reason);
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    }

    async fn handle(&self, request: Request<Incoming>, remote: SocketAddr) -> Response<Body> {
        let headers = request.headers();
        let hosts: Vec<&[u8]> = (headers.get_all(header::HOST).iter())
            .map(HeaderValue::as_bytes)
            .collect();
        if let Err(why) = check_host(&self.hosts, &hosts) {
            return self.refuse(StatusCode::FORBIDDEN, &why, remote, None);
        }
        if request.uri().path() != PATH {
            return self.refuse(
                StatusCode::NOT_FOUND,
                "the MCP endpoint is /mcp",
                remote,
                None,
            );
        }
        if let Err(why) = check_origin(
            &self.settings.allowed_origins,
            headers.get(header::ORIGIN).map(HeaderValue::as_bytes),
        ) {
            return self.refuse(StatusCode::FORBIDDEN, &why, remote, None);
        }
        let caller = match self.callers.authenticate(
            headers
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes),
        ) {
            Ok(caller) => caller,
            Err(failure) => {
                let mut response =
                    self.refuse(StatusCode::UNAUTHORIZED, failure.reason(), remote, None);
                let challenge = match failure {
                    AuthFailure::Missing => "Bearer realm=\"safe-mcp\"",
                    AuthFailure::Malformed => {
                        "Bearer realm=\"safe-mcp\", error=\"invalid_request\""
                    }
                    AuthFailure::Unknown => "Bearer realm=\"safe-mcp\", error=\"invalid_token\"",
                };
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(challenge),
                );
                return response;
            }
        };
        let (mut parts, body) = request.into_parts();
        let max = usize::try_from(self.settings.max_body_bytes).unwrap_or(usize::MAX);
        let too_large = || format!("the request body is over {max} bytes ([http] max_body_bytes)");
        // A declared length over the bound is refused before a byte of it is read.
        let declared = (parts.headers.get(header::CONTENT_LENGTH))
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > self.settings.max_body_bytes) {
            return self.refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                &too_large(),
                remote,
                Some(caller.name()),
            );
        }
        let body = if parts.method == Method::POST {
            // A body that trickles in holds a connection slot: it has a time limit too.
            let read = tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, max).collect());
            match read.await {
                Ok(Ok(collected)) => collected.to_bytes(),
                Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
                    return self.refuse(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        &too_large(),
                        remote,
                        Some(caller.name()),
                    );
                }
                Ok(Err(e)) => {
                    let why = format!("the request body could not be read: {e}");
                    return self.refuse(StatusCode::BAD_REQUEST, &why, remote, Some(caller.name()));
                }
                Err(_) => {
                    let why = format!(
                        "the request body did not arrive within {} s",
                        BODY_TIMEOUT.as_secs()
                    );
                    return self.refuse(
                        StatusCode::REQUEST_TIMEOUT,
                        &why,
                        remote,
                        Some(caller.name()),
                    );
                }
            }
        } else {
            Bytes::new()
        };
        parts.extensions.insert(caller);
        let request = Request::from_parts(parts, Full::new(body));
        let mut service = self.service.clone();
        match tower_service::Service::call(&mut service, request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}

/// Serve `server` over HTTP until SIGTERM or SIGINT. `name` is the server's name for the
/// log line that says where it listens.
pub async fn serve<S>(
    server: S,
    settings: HttpSettings,
    callers: Callers,
    record: RefusalSink,
    options: Options,
    name: &str,
) -> Result<(), HttpError>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    check_options(&options)?;
    let tls = match &options.tls {
        Some((cert, key)) => Some(TlsAcceptor::from(Arc::new(tls_config(cert, key)?))),
        None => None,
    };
    let listener = TcpListener::bind(options.listen)
        .await
        .map_err(|source| HttpError::Bind {
            addr: options.listen,
            source,
        })?;
    let local = listener.local_addr().map_err(|source| HttpError::Bind {
        addr: options.listen,
        source,
    })?;
    let cancel = CancellationToken::new();
    let hosts = allowed_hosts(&settings, local);
    let config = rmcp_config(&settings, hosts.clone(), cancel.clone());
    let factory = move || Ok(server.clone());
    let service =
        StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
    let front = Arc::new(Front {
        callers,
        settings,
        hosts,
        record,
        ledger: RefusalLedger::default(),
        service,
    });
    // The handlers are installed before the server says it listens: a SIGTERM from then on
    // is a stop with the closing checkpoint, never the default action.
    let stop = stop_signal()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(
        "{name} server listening on {scheme}://{local}{PATH} ({} callers{})",
        front.callers.len(),
        if options.behind_proxy {
            ", behind a proxy"
        } else {
            ""
        }
    );
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(stop);
    loop {
        // Finished connections' tasks, reaped.
        while connections.try_join_next().is_some() {}
        let permit = tokio::select! {
            _ = &mut stop => break,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let (stream, remote) = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // EMFILE and the like: wait a little instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let front = front.clone();
        let service = hyper::service::service_fn(move |request| {
            let front = front.clone();
            async move { Ok::<_, Infallible>(front.handle(request, remote).await) }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_TIMEOUT);
        match &tls {
            None => {
                let connection = builder.serve_connection(TokioIo::new(stream), service);
                let watched = graceful.watch(connection);
                connections.spawn(async move {
                    if let Err(e) = watched.await {
                        tracing::debug!("connection from {remote}: {e}");
                    }
                    drop(permit);
                });
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                let watcher = graceful.watcher();
                connections.spawn(async move {
                    let stream =
                        match tokio::time::timeout(HEAD_TIMEOUT, acceptor.accept(stream)).await {
                            Ok(Ok(stream)) => stream,
                            Ok(Err(e)) => {
                                tracing::debug!("TLS handshake with {remote} failed: {e}");
                                return;
                            }
                            Err(_) => {
                                tracing::debug!("TLS handshake with {remote} timed out");
                                return;
                            }
                        };
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    if let Err(e) = watcher.watch(connection).await {
                        tracing::debug!("connection from {remote}: {e}");
                    }
                    drop(permit);
                });
            }
        }
    }
    tracing::info!("{name} server stopping: no new connections, calls in flight may finish");
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "calls still running after {} s are cancelled",
            DRAIN.as_secs()
        );
        // Their connections are dropped, as a client that goes away drops one: each call's
        // token fires, its process tree is killed and its outcome recorded.
        connections.abort_all();
        let deadline = tokio::time::Instant::now() + CANCEL_WAIT;
        while front.callers.in_flight() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    cancel.cancel();
    if let Some(unrecorded) = front.ledger.flush() {
        (front.record)(unrecorded);
    }
    Ok(())
}

/// A future that ends at SIGTERM or SIGINT, its handlers installed now.
fn stop_signal() -> Result<impl Future<Output = ()>, HttpError> {
    use tokio::signal::unix::{SignalKind, signal};
    let install = |kind| {
        signal(kind).map_err(|e| HttpError::Options(format!("cannot watch SIGTERM/SIGINT: {e}")))
    };
    let mut term = install(SignalKind::terminate())?;
    let mut int = install(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}
