//! The HTTP side: routing, authentication, body limits, back-pressure.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{
    HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER,
};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::{mpsc, oneshot};

use crate::body::{RequestGuard, ResponseBody};
use crate::cancel::{Cancels, StopOnDrop};
use crate::inline::{Inline, Outcome};
use crate::metrics::Metrics;
use crate::pool::{Format, Job, Pool, PIECES_IN_FLIGHT};

pub const WIRE_CONTENT_TYPE: &str = "application/x-warren-bincode";
const TEXT: &str = "text/plain; charset=utf-8";

#[derive(Debug)]
pub struct State {
    pub pool: Pool,
    pub inline: Inline,
    pub metrics: Arc<Metrics>,
    pub token: Option<String>,
    pub body_bytes_max: usize,
    pub cancels: Arc<Cancels>,
}

pub async fn handle(
    request: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<ResponseBody>, Infallible> {
    let guard = RequestGuard::new(state.metrics.clone());
    let mut response = route(request, &state).await;
    let mut guard = guard;
    guard.status = response.status().as_u16();
    response.body_mut().guard = Some(guard);
    Ok(response)
}

async fn route(request: Request<Incoming>, state: &State) -> Response<ResponseBody> {
    let path = request.uri().path();
    if path == "/health" && request.method() == Method::GET {
        return whole(StatusCode::OK, TEXT, "ok\n");
    }
    if !authorized(&request, state.token.as_deref()) {
        state.metrics.error("Unauthorized");
        let mut response = failure(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: a valid \"Authorization: Bearer <token>\" header is required",
        );
        response
            .headers_mut()
            .insert("www-authenticate", HeaderValue::from_static("Bearer"));
        return response;
    }
    match (request.method(), path) {
        (&Method::GET, "/metrics") => whole(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            state.metrics.render(),
        ),
        (&Method::POST, "/query") => query(request, state).await,
        (&Method::POST, "/cancel") => cancel(request, state).await,
        (_, "/query" | "/cancel" | "/metrics" | "/health") => failure(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method not allowed: use POST /query, POST /cancel, GET /health or GET /metrics",
        ),
        _ => failure(
            StatusCode::NOT_FOUND,
            "Not found: the endpoints are POST /query, POST /cancel, GET /health and GET /metrics",
        ),
    }
}

/// The body of a request, at most `body_bytes_max` bytes, or the error answer.
async fn read_body(
    request: Request<Incoming>,
    state: &State,
) -> Result<bytes::Bytes, Response<ResponseBody>> {
    let too_large = || {
        state.metrics.error("Payload too large");
        failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "Payload too large: request bodies are limited to {} bytes",
                state.body_bytes_max
            ),
        )
    };
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > state.body_bytes_max as u64) {
        return Err(too_large());
    }
    match Limited::new(request.into_body(), state.body_bytes_max)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(error) => {
            state.metrics.error("Bad request");
            Err(failure(
                StatusCode::BAD_REQUEST,
                &format!("Bad request: {error}"),
            ))
        }
    }
}

/// A request's error as its 4xx answer.
fn bad_request(state: &State, error: &warren::Error) -> Response<ResponseBody> {
    state.metrics.error(error.kind());
    failure(StatusCode::BAD_REQUEST, &crate::error_line(error))
}

/// `POST /cancel` with `{"query_id": n}`: stops the query in flight with that id (queued or
/// running); 404 when none has it (it may have ended).
async fn cancel(request: Request<Incoming>, state: &State) -> Response<ResponseBody> {
    let body = match read_body(request, state).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let id = match crate::request::decode_cancel(&body) {
        Ok(id) => id,
        Err(error) => return bad_request(state, &error),
    };
    if state.cancels.cancel(id) {
        whole(StatusCode::OK, TEXT, "cancelled\n")
    } else {
        failure(
            StatusCode::NOT_FOUND,
            &format!("Not found: no query in flight has id {id}"),
        )
    }
}

async fn query(request: Request<Incoming>, state: &State) -> Response<ResponseBody> {
    let format = match request.headers().get(ACCEPT).and_then(|v| v.to_str().ok()) {
        Some(accept) if accept.contains(WIRE_CONTENT_TYPE) => Format::Wire,
        _ => Format::Json,
    };
    let wire_body = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(WIRE_CONTENT_TYPE));
    let body = match read_body(request, state).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let decoded = if wire_body {
        crate::request::decode_wire(&body)
    } else {
        crate::request::decode(&body)
    };
    let decoded = match decoded {
        Ok(decoded) => decoded,
        Err(error) => return bad_request(state, &error),
    };
    if decoded.every_statement && format != Format::Wire {
        let error = warren::Error::Conversion(
            "malformed request: every statement's result needs the binary answer (Accept: application/x-warren-bincode)".into(),
        );
        return bad_request(state, &error);
    }
    let registration = match decoded.query_id {
        0 => None,
        id => match state.cancels.register(id) {
            Ok(registration) => Some(registration),
            Err(message) => {
                return bad_request(
                    state,
                    &warren::Error::Conversion(format!("malformed request: {message}")),
                )
            }
        },
    };
    let (started_sender, started) = oneshot::channel();
    let (body_sender, pieces) = mpsc::channel(PIECES_IN_FLIGHT);
    // Every query can be stopped: by `POST /cancel` when it has an id, and by its client
    // going away (this future or the response body dropped before the answer is complete).
    let cancel = registration
        .as_ref()
        .map_or_else(Default::default, |r| r.cancel.clone());
    // Small queries on this thread, unless the query threads are overloaded (then the excess
    // is refused below, as every query is).
    if !decoded.every_statement && state.pool.light_has_room() {
        let outcome = state.inline.try_answer(
            &decoded.query,
            &decoded.parameters,
            format,
            &cancel,
            &state.metrics,
        );
        match outcome {
            Outcome::HandOver => {}
            Outcome::Answered(Ok((bytes, error))) => {
                if let Some(error) = error {
                    state.metrics.error(error.kind());
                }
                return whole(StatusCode::OK, content_type(format), bytes);
            }
            Outcome::Answered(Err(error)) => return query_failed(state, &error),
            Outcome::Panicked => return thread_stopped(state),
        }
    }
    let job = Job {
        query: decoded.query,
        parameters: decoded.parameters,
        format,
        every_statement: decoded.every_statement,
        cancel: Some(cancel.clone()),
        started: started_sender,
        body: body_sender,
    };
    if state.pool.submit(job).is_err() {
        state.metrics.error("Overloaded");
        return overloaded("every query thread is busy and the queue is full");
    }
    let mut stop = StopOnDrop::new(cancel);
    let outcome = started.await;
    if !matches!(outcome, Ok(Ok(()))) {
        // The query ended by itself (an error): nothing left to stop.
        stop.complete();
    }
    match outcome {
        Ok(Ok(())) => {
            let mut response = Response::new(ResponseBody::stream(pieces));
            // The id stays the request's until its answer is complete.
            response.body_mut().registration = registration;
            response.body_mut().stop = Some(stop);
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(content_type(format)));
            response
        }
        Ok(Err(error)) => query_failed(state, &error),
        Err(_) => thread_stopped(state),
    }
}

fn content_type(format: Format) -> &'static str {
    match format {
        Format::Json => "application/json",
        Format::Wire => WIRE_CONTENT_TYPE,
    }
}

/// The answer to a query that failed before its first row.
fn query_failed(state: &State, error: &warren::Error) -> Response<ResponseBody> {
    state.metrics.error(error.kind());
    failure(crate::status(error), &crate::error_line(error))
}

/// The answer to a query whose thread stopped (a bug in the engine).
fn thread_stopped(state: &State) -> Response<ResponseBody> {
    state.metrics.error("Internal error");
    failure(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Internal error: the query thread stopped",
    )
}

fn whole(
    status: StatusCode,
    content_type: &'static str,
    text: impl Into<bytes::Bytes>,
) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::whole(text));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// An error answer: `Error: <kind>: <message>`, as the command line prints it.
/// The answer to every request on a connection accepted beyond `--max-connections`: 503 with
/// `Retry-After`, and the connection is closed after it.
pub async fn too_many_connections(
    _request: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<ResponseBody>, Infallible> {
    state.metrics.error("Overloaded");
    Ok(overloaded(
        "the server has as many connections open as --max-connections allows",
    ))
}

/// 503 `Overloaded: <why>; retry later` with `Retry-After: 1`.
fn overloaded(why: &str) -> Response<ResponseBody> {
    let mut response = failure(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("Overloaded: {why}; retry later"),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn failure(status: StatusCode, line: &str) -> Response<ResponseBody> {
    whole(status, TEXT, format!("Error: {line}\n"))
}

fn authorized(request: &Request<Incoming>, token: Option<&str>) -> bool {
    let Some(token) = token else { return true };
    let Some(value) = request.headers().get(AUTHORIZATION) else {
        return false;
    };
    let expected = format!("Bearer {token}");
    equal_in_constant_time(value.as_bytes(), expected.as_bytes())
}

/// Compares without an early exit, so the time taken does not tell how much of a guess was
/// right (only whether its length was).
pub fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}
