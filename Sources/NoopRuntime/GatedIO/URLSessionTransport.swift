import FeatureGate
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Transport`` over `URLSession`: each request's path is resolved against ``baseURL``.
///
/// Wrap it in a ``GatedTransport`` so that nothing leaves while the feature is off:
///
/// ```swift
/// let uploads = GatedTransport(
///     URLSessionTransport(baseURL: URL(string: "https://collector.example.com")!),
///     features: .analytics, privacy: privacy, counter: IOCounter())
/// ```
///
/// - Creating it touches no file, no directory and no socket: the session's configuration and the `URLSession` are
///   made on the first request, which only a request that passed the gate makes. (On Linux, merely evaluating
///   `URLSessionConfiguration.ephemeral` creates cache directories under `$HOME`, so the default configuration is
///   not made until then.)
/// - It never blocks a thread of Swift's cooperative pool: the request runs on `URLSession`'s own threads and the
///   caller is resumed when it ends. Cancelling the calling task cancels the request.
/// - **It follows no redirect to another origin** (scheme, host or port): the 3xx response is returned as it is,
///   so nothing the request carries (an `ETag` or `Last-Modified` validator, an `Idempotency-Key`, a body, an
///   identifier) reaches a host you did not choose. A request whose path resolves to another origin than
///   ``baseURL``'s is refused without being sent (``URLSessionTransportError/otherOrigin(_:)``).
/// - A redirect within the origin is followed (at most ``maximumRedirects`` in a row), except for a request that
///   carries an `Idempotency-Key` (an erasure request, an event batch): its 3xx comes back as it is, so that the
///   caller decides (an erasure is never redirected; see ``ErasureOutcome/redirected(_:)``).
/// - A response body longer than ``maximumResponseSize`` is refused (``URLSessionTransportError/responseTooLarge(_:)``).
/// - **It leaks nothing.** `URLSession` keeps its delegate (and with it the session, its connection pool and its
///   redirect policy) until it is invalidated: when the last copy of a transport is released, its session is
///   invalidated (`finishTasksAndInvalidate()`), which lets requests still under way finish. The redirect
///   bookkeeping is dropped as each request completes.
public struct URLSessionTransport: Transport {
    /// The scheme, host, port and base path every request goes to.
    public let baseURL: URL
    /// The most redirects within the origin followed for one request: 5.
    public static let maximumRedirects = 5
    /// The largest response body accepted, in bytes.
    public let maximumResponseSize: Int

    private let owner: SessionOwner

    /// A transport to `baseURL`. Touches no file, directory or socket, and creates no session, until the first
    /// request.
    ///
    /// - Parameters:
    ///   - baseURL: The origin (and base path) of every request; an `http` or `https` URL.
    ///   - configuration: The session's configuration; when `nil` (the default), an ephemeral one (no cookies, no
    ///     cache on disk) made on the first request. A configuration you pass was made by you, with whatever that
    ///     did on the disk.
    ///   - maximumResponseSize: The largest response body accepted; 10 MiB unless given.
    public init(
        baseURL: URL, configuration: URLSessionConfiguration? = nil, maximumResponseSize: Int = 10 << 20
    ) {
        self.baseURL = baseURL
        self.maximumResponseSize = maximumResponseSize
        self.owner = SessionOwner(configuration: configuration, redirects: RedirectPolicy(origin: Origin(baseURL)))
    }

    /// Sends `request` to its path resolved against ``baseURL`` and returns the response, a redirect to another
    /// origin included (not followed).
    ///
    /// - Throws: ``URLSessionTransportError`` when the path leaves the origin or the body is too large;
    ///   `URLSession`'s error when nothing usable came back; `CancellationError` when the calling task is cancelled.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let url = URL(string: request.path, relativeTo: baseURL)?.absoluteURL else {
            throw URLSessionTransportError.invalidPath(request.path)
        }
        guard Origin(url) == owner.redirects.origin else { throw URLSessionTransportError.otherOrigin(url) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = request.body }

        let session = owner.session()
        let redirects = owner.redirects
        let task = LockedValue<URLSessionDataTask?>(nil)
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let dataTask = session.dataTask(with: urlRequest) { data, response, error in
                    // A task made with a completion handler may never reach the delegate's didCompleteWithError.
                    if let identifier = task.withLock({ $0?.taskIdentifier }) { redirects.forget(identifier) }
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                // Stored before the check: a cancellation either finds the task stored or is seen here.
                task.withLock { $0 = dataTask }
                if Task.isCancelled { dataTask.cancel() }
                dataTask.resume()
            }
        } onCancel: {
            task.withLock { $0?.cancel() }
        }
        if Task.isCancelled { throw CancellationError() }
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        guard data.count <= maximumResponseSize else { throw URLSessionTransportError.responseTooLarge(data.count) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return TransportResponse(statusCode: http.statusCode, headers: headers, body: data)
    }
}

extension URLSessionTransport {
    /// Redirect hops counted for requests under way; 0 once every request has completed (a test seam).
    package var redirectBookkeepingCount: Int { owner.redirects.bookkeepingCount }

    /// The session's delegate, for a test to hold weakly: the session keeps it until it is invalidated.
    package var sessionDelegate: AnyObject { owner.redirects }
}

/// What every copy of a ``URLSessionTransport`` shares: the session, made on the first request and invalidated when
/// the last copy goes.
private final class SessionOwner: Sendable {
    let redirects: RedirectPolicy
    /// The configuration given, or `nil` for an ephemeral one made with the session.
    private let configuration: URLSessionConfiguration?
    private let made = LockedValue<URLSession?>(nil)

    init(configuration: URLSessionConfiguration?, redirects: RedirectPolicy) {
        self.configuration = configuration
        self.redirects = redirects
    }

    deinit {
        // Without it the session keeps its delegate, its connection pool and itself until the process exits.
        made.withLock { $0 }?.finishTasksAndInvalidate()
    }

    /// The session, made on the first call (with the default configuration, if none was given: on Linux, making
    /// one creates directories, so not before).
    func session() -> URLSession {
        made.withLock { session in
            if let session { return session }
            let created = URLSession(
                configuration: configuration ?? .ephemeral, delegate: redirects, delegateQueue: nil)
            session = created
            return created
        }
    }
}

/// Why ``URLSessionTransport`` refused a request or its response.
public enum URLSessionTransportError: Error, Sendable, CustomStringConvertible {
    /// The request's path is not a valid URL reference.
    case invalidPath(String)
    /// The request's path resolves to another origin (scheme, host, port) than the transport's base URL: not sent.
    case otherOrigin(URL)
    /// The response body had this many bytes, more than ``URLSessionTransport/maximumResponseSize``.
    case responseTooLarge(Int)

    /// What was refused.
    public var description: String {
        switch self {
        case .invalidPath(let path): "not a valid request path: \(UntrustedText.escaped(path))"
        case .otherOrigin(let url):
            "refused: \(UntrustedText.escaped(url.absoluteString)) is not on the transport's origin"
        case .responseTooLarge(let size): "refused: a response body of \(size) bytes is too large"
        }
    }
}

/// Scheme, host and port, as a redirect is judged by.
struct Origin: Hashable, Sendable {
    let scheme: String?
    let host: String?
    let port: Int?

    init(_ url: URL) {
        let scheme = url.scheme?.lowercased()
        self.scheme = scheme
        host = url.host?.lowercased()
        port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }
}

/// Follows a redirect only within the origin, at most ``URLSessionTransport/maximumRedirects`` times in a row, and
/// never for a request that carries an `Idempotency-Key`.
final class RedirectPolicy: NSObject, URLSessionTaskDelegate, Sendable {
    let origin: Origin
    private let hops = LockedValue<[Int: Int]>([:])

    init(origin: Origin) {
        self.origin = origin
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let original = task.originalRequest
        let keyed = original?.value(forHTTPHeaderField: ErasureRequest.idempotencyKeyHeader) != nil
        let count = hops.withLock { hops in
            hops[task.taskIdentifier, default: 0] += 1
            return hops[task.taskIdentifier] ?? 0
        }
        guard !keyed, count <= URLSessionTransport.maximumRedirects, let url = request.url, Origin(url) == origin
        else {
            completionHandler(nil)
            return
        }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        forget(task.taskIdentifier)
    }

    /// Drops the hop count of a task that completed; called by whichever of its completion handler and
    /// `didCompleteWithError` comes first (and harmless again after).
    func forget(_ taskIdentifier: Int) {
        _ = hops.withLock { $0.removeValue(forKey: taskIdentifier) }
    }

    /// How many tasks have hop counts.
    var bookkeepingCount: Int { hops.withLock { $0.count } }
}
