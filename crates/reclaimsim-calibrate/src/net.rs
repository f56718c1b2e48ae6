//! Request/response round trips of a small payload over loopback TCP: with blocking
//! sockets, and with nonblocking sockets waited on with epoll (mio) on both ends, as
//! memcached (libevent) and memtier do.

use crate::stats::{self, Summary};
use crate::{Measurement, Outcome, Scale};
use mio::{Events, Interest, Poll, Token};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;

const PAYLOAD: usize = 64;

/// A connected client and the accepted server side, both with TCP_NODELAY.
fn pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let client = TcpStream::connect(listener.local_addr()?)?;
    let (server, _) = listener.accept()?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    Ok((client, server))
}

/// Writes all of `buf` to a nonblocking socket (64 bytes fit its empty buffer at once;
/// a full buffer is waited out).
fn write_all_nb(s: &mut impl Write, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match s.write(buf) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads what a nonblocking socket has into `got` (epoll is edge-triggered: drain it);
/// false at end of stream.
fn read_available(s: &mut impl Read, got: &mut Vec<u8>) -> io::Result<bool> {
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Ok(false),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(true),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A nonblocking socket registered with its own epoll instance.
struct Polled {
    stream: mio::net::TcpStream,
    poll: Poll,
    events: Events,
    got: Vec<u8>,
}

impl Polled {
    fn new(s: TcpStream) -> io::Result<Polled> {
        s.set_nonblocking(true)?;
        let mut stream = mio::net::TcpStream::from_std(s);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut stream, Token(0), Interest::READABLE)?;
        let (events, got) = (Events::with_capacity(4), Vec::new());
        Ok(Polled {
            stream,
            poll,
            events,
            got,
        })
    }

    /// Waits in epoll_wait until `n` bytes are in (they are left in `got`); false at
    /// end of stream.
    fn wait_for(&mut self, n: usize) -> io::Result<bool> {
        while self.got.len() < n {
            self.poll.poll(&mut self.events, None)?;
            if !read_available(&mut self.stream, &mut self.got)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Echoes each payload back until the client closes.
fn echo(server: TcpStream, epoll: bool) -> JoinHandle<io::Result<()>> {
    std::thread::spawn(move || {
        if epoll {
            let mut p = Polled::new(server)?;
            while p.wait_for(PAYLOAD)? {
                let msg: Vec<u8> = p.got.drain(..PAYLOAD).collect();
                write_all_nb(&mut p.stream, &msg)?;
            }
            return Ok(());
        }
        let mut s = server;
        let mut buf = [0u8; PAYLOAD];
        loop {
            match s.read_exact(&mut buf) {
                Ok(()) => s.write_all(&buf)?,
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    })
}

/// ns per round trip of a 64-byte request and its 64-byte echo.
fn round_trips(s: &Scale, epoll: bool) -> io::Result<Summary> {
    let (client, server) = pair()?;
    let server = echo(server, epoll);
    let mut failed = None;
    let msg = [7u8; PAYLOAD];
    let sum = if epoll {
        let mut c = Polled::new(client)?;
        stats::time_rounds(s.rounds(15), s.iters(4_000), |_| {
            let done = write_all_nb(&mut c.stream, &msg).and_then(|()| c.wait_for(PAYLOAD));
            match done {
                Ok(true) => c.got.clear(),
                Ok(false) => failed = Some(ErrorKind::UnexpectedEof.into()),
                Err(e) => failed = Some(e),
            }
        })
    } else {
        let mut c = client;
        let mut back = [0u8; PAYLOAD];
        stats::time_rounds(s.rounds(15), s.iters(4_000), |_| {
            if let Err(e) = c.write_all(&msg).and_then(|()| c.read_exact(&mut back)) {
                failed = Some(e);
            }
        })
    };
    let served = server
        .join()
        .map_err(|_| io::Error::other("the echo server panicked"))?;
    match failed {
        Some(e) => Err(e),
        None => served.and_then(|()| sum.ok_or_else(|| io::Error::other("no rounds"))),
    }
}

/// Loopback round trips with blocking sockets and with epoll.
pub fn tcp(s: &Scale) -> Vec<Outcome> {
    [("tcp_rtt_blocking", false), ("tcp_rtt_epoll", true)]
        .into_iter()
        .map(|(name, epoll)| {
            let sum = round_trips(s, epoll).map_err(|e| (name.to_string(), e.to_string()))?;
            let how = if epoll {
                "64-byte request and echo over loopback TCP (TCP_NODELAY), nonblocking sockets \
                 waited on with epoll (mio) by client and server thread; ns per round trip"
            } else {
                "64-byte request and echo over loopback TCP (TCP_NODELAY), blocking read and \
                 write in client and server thread; ns per round trip"
            };
            Ok(Measurement::new(name, sum, how.into()))
        })
        .collect()
}
