//! HTTPS: [`HttpServer::serve_tls`] and [`serve_tls`], on rustls (ring provider).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bebop_rpc::{Address, Peer, Server};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

use crate::server::HttpServer;

/// `config` with ALPN `h2` and `http/1.1` unless it names protocols of its own.
fn with_alpn(config: Arc<ServerConfig>) -> Arc<ServerConfig> {
    if !config.alpn_protocols.is_empty() {
        return config;
    }
    let mut c = (*config).clone();
    c.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(c)
}

impl HttpServer {
    /// Accepts TLS connections until the Bebop server shuts down: HTTP/2 when ALPN picks
    /// `h2` (the configuration offers `h2` and `http/1.1` unless it names protocols of its
    /// own), HTTP/1.1 otherwise. A handshake must finish within the server's
    /// `element_timeout`.
    pub async fn serve_tls(
        self,
        listener: TcpListener,
        config: Arc<ServerConfig>,
    ) -> io::Result<()> {
        let server = self.service().server().clone();
        let acceptor = TlsAcceptor::from(with_alpn(config));
        let handshake = server.limits().element_timeout;
        loop {
            let accepted = tokio::select! {
                r = listener.accept() => r,
                _ = server.shutting_down() => return Ok(()),
            };
            match accepted {
                Ok((stream, remote)) => {
                    let _ = stream.set_nodelay(true);
                    let local = stream.local_addr().ok().map(Address::Tcp);
                    let peer = Peer::new(Some(Address::Tcp(remote)), local);
                    let acceptor = acceptor.clone();
                    let this = self.clone();
                    tokio::spawn(async move {
                        match tokio::time::timeout(handshake, acceptor.accept(stream)).await {
                            Ok(Ok(tls)) => this.serve_connection(tls, peer).await,
                            Ok(Err(e)) => {
                                tracing::debug!(error = %e, %remote, "TLS handshake failed")
                            }
                            Err(_) => tracing::debug!(%remote, "TLS handshake timed out"),
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    if !matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::ConnectionReset
                            | io::ErrorKind::Interrupted
                            | io::ErrorKind::WouldBlock
                    ) && !e.raw_os_error().is_some_and(|n| n == 24 || n == 23)
                    {
                        return Err(e);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
}

/// Serves `server` over HTTPS on `listener`: [`HttpServer::serve_tls`].
pub async fn serve_tls(
    server: Server,
    listener: TcpListener,
    config: Arc<ServerConfig>,
) -> io::Result<()> {
    HttpServer::new(server).serve_tls(listener, config).await
}
