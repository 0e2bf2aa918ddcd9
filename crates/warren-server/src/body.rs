//! Response bodies: a whole small answer, or a result streamed piece by piece from a query
//! thread. Each carries its request's accounting, done when the body is dropped, i.e. once
//! the last byte has been written or the connection is gone.

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

use crate::metrics::Metrics;
use crate::pool::Piece;
use crate::spin::Spin;

/// Counts a request in flight from its arrival until its body is dropped.
#[derive(Debug)]
pub struct RequestGuard {
    started: Instant,
    metrics: Arc<Metrics>,
    /// The serving I/O thread's spin state: no spin before parking while this lives.
    spin: Option<Arc<Spin>>,
    pub status: u16,
}

impl RequestGuard {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        metrics.in_flight.fetch_add(1, Ordering::Relaxed);
        let spin = crate::spin::current();
        if let Some(spin) = &spin {
            spin.request_started();
        }
        Self {
            started: Instant::now(),
            metrics,
            spin,
            status: 0,
        }
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if let Some(spin) = &self.spin {
            spin.request_done(Instant::now());
        }
        self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.metrics
            .request_done(self.status, self.started.elapsed());
    }
}

#[derive(Debug)]
enum Content {
    Whole(Option<Bytes>),
    Stream {
        receiver: mpsc::Receiver<Piece>,
        ended: bool,
    },
}

#[derive(Debug)]
pub struct ResponseBody {
    content: Content,
    pub guard: Option<RequestGuard>,
    /// The query's cancel id, held until the answer is complete.
    pub registration: Option<crate::cancel::Registration>,
    /// Stops the query if the body is dropped (the client went away) before its end.
    pub stop: Option<crate::cancel::StopOnDrop>,
}

impl ResponseBody {
    pub fn whole(bytes: impl Into<Bytes>) -> Self {
        Self {
            content: Content::Whole(Some(bytes.into())),
            guard: None,
            registration: None,
            stop: None,
        }
    }

    pub fn stream(receiver: mpsc::Receiver<Piece>) -> Self {
        Self {
            content: Content::Stream {
                receiver,
                ended: false,
            },
            guard: None,
            registration: None,
            stop: None,
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        match &mut this.content {
            Content::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Content::Stream { receiver, ended } => {
                if *ended {
                    return Poll::Ready(None);
                }
                match receiver.poll_recv(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(Some(Piece::Data(bytes))) => {
                        Poll::Ready(Some(Ok(Frame::data(bytes))))
                    }
                    Poll::Ready(Some(Piece::End)) => {
                        *ended = true;
                        if let Some(stop) = &mut this.stop {
                            stop.complete();
                        }
                        Poll::Ready(None)
                    }
                    // Cut short: an error makes hyper end the connection without the final
                    // chunk, so the client cannot mistake a partial result for a whole one.
                    Poll::Ready(None) => {
                        *ended = true;
                        Poll::Ready(Some(Err(std::io::Error::other(
                            "the result stream was cut short",
                        ))))
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.content {
            Content::Whole(bytes) => bytes.is_none(),
            Content::Stream { ended, .. } => *ended,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.content {
            Content::Whole(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            Content::Whole(None) => SizeHint::with_exact(0),
            Content::Stream { .. } => SizeHint::default(),
        }
    }
}
