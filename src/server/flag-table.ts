/**
 * The flags of `capstan server`: kube-apiserver's names, types and defaults (so Capstan drops in
 * where kube-apiserver is started: envtest, kwok, kubeadm-style manifests), plus Capstan's own
 * `--data-dir`. Flags whose feature arrives in a later version are accepted and stored
 * (`notImplemented`), and `--help` says so.
 */
import type { FlagSpec } from '../flags/flags.js';

const SERVING = 'Secure serving';
const ETCD = 'Etcd';
const GENERIC = 'Generic';
const AUTHN = 'Authentication';
const AUTHZ = 'Authorization';
const AUDIT = 'Auditing';
const API = 'API enablement';
const ADMISSION = 'Admission';
const MISC = 'Misc';
const LOGS = 'Logs';
const METRICS = 'Metrics';
const CAPSTAN = 'Capstan';

const later = { notImplemented: true } as const;

/** Every flag of `capstan server`, in help order (one flag per line: a table, not code). */
// prettier-ignore
export const SERVER_FLAGS: readonly FlagSpec[] = [
  // Secure serving
  { section: SERVING, name: 'secure-port', type: 'int', default: 6443, usage: 'The port on which to serve HTTPS with authentication and authorization. 0 picks a free port (Capstan extension).' },
  { section: SERVING, name: 'bind-address', type: 'string', default: '0.0.0.0', usage: 'The IP address on which to listen for the --secure-port port. 0.0.0.0 or :: (or blank) mean all interfaces.' },
  { section: SERVING, name: 'cert-dir', type: 'string', default: '/var/run/capstan', usage: 'The directory where the TLS certs are located. An apiserver.crt/apiserver.key pair found there that Capstan did not issue is served as it is; a missing pair is generated (with a CA). If --tls-cert-file and --tls-private-key-file are provided, this flag is only used for the CA and the admin client certificate.' },
  { section: SERVING, name: 'tls-cert-file', type: 'string', default: '', usage: 'File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after server cert). If not provided, a CA and a serving certificate are generated in --cert-dir.' },
  { section: SERVING, name: 'tls-private-key-file', type: 'string', default: '', usage: 'File containing the default x509 private key matching --tls-cert-file.' },
  { section: SERVING, name: 'tls-min-version', type: 'string', default: '', usage: 'Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13.' },
  { section: SERVING, name: 'tls-cipher-suites', type: 'stringSlice', default: [], usage: 'Comma-separated list of cipher suites for the server.' },
  { section: SERVING, name: 'tls-sni-cert-key', type: 'stringArray', default: [], usage: 'A pair of x509 certificate and private key file paths, optionally suffixed with a list of domain patterns.' },
  { section: SERVING, name: 'http2-max-streams-per-connection', type: 'int', default: 0, usage: 'The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means to use the library default.' },

  // Etcd
  { section: ETCD, name: 'etcd-servers', type: 'stringSlice', default: [], usage: 'List of etcd servers to connect with (scheme://ip:port), comma separated. Without it, Capstan uses its embedded store under --data-dir.' },
  { section: ETCD, name: 'etcd-cafile', type: 'string', default: '', usage: 'SSL Certificate Authority file used to secure etcd communication.' },
  { section: ETCD, name: 'etcd-certfile', type: 'string', default: '', usage: 'SSL certification file used to secure etcd communication.' },
  { section: ETCD, name: 'etcd-keyfile', type: 'string', default: '', usage: 'SSL key file used to secure etcd communication.' },
  { section: ETCD, name: 'etcd-prefix', type: 'string', default: '/registry', usage: 'The prefix to prepend to all resource paths in etcd (and in the embedded store).' },
  { section: ETCD, name: 'etcd-compaction-interval', type: 'duration', default: 300_000, usage: 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.' },
  { section: ETCD, name: 'etcd-healthcheck-timeout', type: 'duration', default: 2_000, usage: 'The timeout to use when checking etcd health.' },
  { section: ETCD, name: 'etcd-readycheck-timeout', type: 'duration', default: 2_000, usage: 'The timeout to use when checking etcd readiness.' },
  { section: ETCD, name: 'storage-backend', type: 'string', default: 'etcd3', usage: "The storage backend for persistence. Options: 'etcd3' (default)." },
  { section: ETCD, name: 'storage-media-type', type: 'string', default: 'application/vnd.kubernetes.protobuf', usage: 'The media type to use to store objects in storage. Some resources or storage backends may only support a specific media type and will ignore this setting. Supported media types: [application/json, application/yaml, application/vnd.kubernetes.protobuf]' },
  { section: ETCD, name: 'watch-cache', type: 'bool', default: true, usage: 'Enable watch caching in the apiserver.' },
  { section: ETCD, name: 'default-watch-cache-size', type: 'int', default: 100, usage: 'Default watch cache size. If zero, watch cache will be disabled for resources that do not have a default watch size set.' },
  { section: ETCD, name: 'watch-cache-sizes', type: 'stringSlice', default: [], usage: 'Watch cache size settings for some resources (pods, nodes, etc.), comma separated: resource[.group]#size.' },
  { section: ETCD, name: 'delete-collection-workers', type: 'int', default: 1, usage: 'Number of workers spawned for DeleteCollection call.', ...later },
  { section: ETCD, name: 'encryption-provider-config', type: 'string', default: '', usage: 'The file containing configuration for encryption providers to be used for storing secrets in etcd (EncryptionConfiguration apiserver.config.k8s.io/v1: identity, aescbc, aesgcm, secretbox; the first provider encrypts, all decrypt).' },
  { section: ETCD, name: 'etcd-servers-overrides', type: 'stringSlice', default: [], usage: 'Per-resource etcd servers overrides, comma separated: group/resource#servers.', ...later },

  // Generic
  { section: GENERIC, name: 'advertise-address', type: 'string', default: '', usage: 'The IP address on which to advertise the apiserver to members of the cluster. Added to the generated serving certificate; the kubernetes Service\'s Endpoints and EndpointSlice carry it (unset: the bind address, else the first non-loopback address).' },
  { section: GENERIC, name: 'external-hostname', type: 'string', default: '', usage: 'The hostname to use when generating externalized URLs for this master.', ...later },
  { section: GENERIC, name: 'event-ttl', type: 'duration', default: 3_600_000, usage: 'Amount of time to retain events: each Event is written with a storage lease of this length (kube-apiserver\'s event TTL), so the store removes it when the lease expires.' },
  { section: GENERIC, name: 'request-timeout', type: 'duration', default: 60_000, usage: 'How long a request that is not long-running (watches, exec, logs, proxy are) may take: one still unanswered then gets 504 Timeout. A shorter ?timeout= on the request wins. Also the shutdown grace for requests in flight.' },
  { section: GENERIC, name: 'min-request-timeout', type: 'int', default: 1800, usage: 'The minimum number of seconds a handler must keep a request open before timing it out: a watch without ?timeoutSeconds= ends after a random time between this and twice this.' },
  { section: GENERIC, name: 'max-requests-inflight', type: 'int', default: 400, usage: 'This and --max-mutating-requests-inflight are summed to determine the server\'s total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of non-mutating requests in flight (429 beyond it), or a zero value disables the limit completely. Long-running requests and system:masters are not limited.' },
  { section: GENERIC, name: 'max-mutating-requests-inflight', type: 'int', default: 200, usage: 'This and --max-requests-inflight are summed to determine the server\'s total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of mutating requests in flight (429 beyond it), or a zero value disables the limit completely.' },
  { section: GENERIC, name: 'enable-priority-and-fairness', type: 'bool', default: true, usage: 'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness (the FlowSchemas and PriorityLevelConfigurations of flowcontrol.apiserver.k8s.io/v1; the two max-in-flight limits add up to the server concurrency limit). Requests take one seat each; watches take none.' },
  { section: GENERIC, name: 'goaway-chance', type: 'float', default: 0, usage: 'To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY) with this probability. Long-running requests (watches) are never picked. Min is 0 (off), max is 0.02 (1/50 requests); .001 (1/1000) is a recommended starting point.' },
  { section: GENERIC, name: 'livez-grace-period', type: 'duration', default: 0, usage: 'The maximum amount of time it might take for the apiserver to complete its startup sequence and become live. From the start until this has elapsed, /livez reports unfinished post-start hooks as ok.' },
  { section: GENERIC, name: 'shutdown-delay-duration', type: 'duration', default: 0, usage: 'Time to delay the termination: /readyz fails at once, while the server keeps serving for this long.' },
  { section: GENERIC, name: 'shutdown-send-retry-after', type: 'bool', default: false, usage: 'If true, after --shutdown-delay-duration the listener stays open until the requests in flight (not long-running) are answered; requests arriving meanwhile get 429 with Retry-After: 5 and their connection is closed, instead of a refused connection.' },
  { section: GENERIC, name: 'shutdown-watch-termination-grace-period', type: 'duration', default: 0, usage: 'The grace period for active watch request(s) to drain during graceful shutdown: when set, watches are ended (cleanly) at max(count / period, 200) per second instead of all at once, and the shutdown waits for them.' },
  { section: GENERIC, name: 'cors-allowed-origins', type: 'stringSlice', default: [], usage: 'List of allowed origins for CORS, comma separated. If empty, CORS is not enabled.' },
  { section: GENERIC, name: 'strict-transport-security-directives', type: 'stringSlice', default: [], usage: 'List of directives for HSTS, comma separated. If empty, no HSTS header.' },
  { section: GENERIC, name: 'max-connection-bytes-per-sec', type: 'int', default: 0, usage: 'If non-zero, throttle each user connection to this number of bytes/sec. Currently only applies to long-running requests (the watches of one connection share the budget).' },

  // Authentication
  { section: AUTHN, name: 'anonymous-auth', type: 'bool', default: true, usage: 'Enables anonymous requests: requests not rejected by another authentication method are treated as system:anonymous in group system:unauthenticated. As in kube-apiserver, it is turned off (with a warning) when --authorization-mode includes AlwaysAllow.' },
  { section: AUTHN, name: 'client-ca-file', type: 'string', default: '', usage: 'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate. Capstan also trusts the CA in --cert-dir.' },
  { section: AUTHN, name: 'token-auth-file', type: 'string', default: '', usage: 'If set, the file that will be used to secure the secure port of the API server via token authentication.' },
  { section: AUTHN, name: 'enable-bootstrap-token-auth', type: 'bool', default: false, usage: "Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system' namespace to be used for TLS bootstrapping authentication." },
  { section: AUTHN, name: 'service-account-key-file', type: 'stringArray', default: [], usage: 'File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. May be specified multiple times. If neither this nor --service-account-signing-key-file is given, a key kept in --cert-dir (sa.key) signs and verifies.' },
  { section: AUTHN, name: 'service-account-signing-key-file', type: 'string', default: '', usage: 'Path to the file that contains the current private key of the service account token issuer. Without it, a private key in --service-account-key-file signs (Capstan extension), else the key in --cert-dir.' },
  { section: AUTHN, name: 'service-account-issuer', type: 'stringArray', default: [], usage: 'Identifier of the service account token issuer. May be specified multiple times; the first is used to issue, all are accepted. Default https://kubernetes.default.svc.cluster.local (Capstan; kube-apiserver requires the flag).' },
  { section: AUTHN, name: 'service-account-jwks-uri', type: 'string', default: '', usage: 'Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration. Must be https.' },
  { section: AUTHN, name: 'service-account-lookup', type: 'bool', default: true, usage: 'If true, validate ServiceAccount tokens exist in etcd as part of authentication.' },
  { section: AUTHN, name: 'service-account-max-token-expiration', type: 'duration', default: 0, usage: 'The maximum validity duration of a token created by the service account token issuer. 0 means no limit; otherwise between 1h and 2^32 seconds.' },
  { section: AUTHN, name: 'service-account-extend-token-expiration', type: 'bool', default: true, usage: 'Turns on projected service account expiration extension during token generation: pod-bound tokens for the API audiences asking 3607s are valid for a year and warn after 3607s.' },
  { section: AUTHN, name: 'api-audiences', type: 'stringSlice', default: [], usage: 'Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. Default: the --service-account-issuer values.' },
  { section: AUTHN, name: 'oidc-issuer-url', type: 'string', default: '', usage: 'The URL of the OpenID issuer, only HTTPS scheme will be accepted.' },
  { section: AUTHN, name: 'oidc-client-id', type: 'string', default: '', usage: 'The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.' },
  { section: AUTHN, name: 'oidc-username-claim', type: 'string', default: 'sub', usage: 'The OpenID claim to use as the user name.' },
  { section: AUTHN, name: 'oidc-username-prefix', type: 'string', default: '', usage: "If provided, all usernames will be prefixed with this value; '-' disables prefixing." },
  { section: AUTHN, name: 'oidc-groups-claim', type: 'string', default: '', usage: "If provided, the name of a custom OpenID Connect claim for specifying user groups." },
  { section: AUTHN, name: 'oidc-groups-prefix', type: 'string', default: '', usage: 'If provided, all groups will be prefixed with this value.' },
  { section: AUTHN, name: 'oidc-required-claim', type: 'mapStringString', default: {}, usage: 'A key=value pair that describes a required claim in the ID Token. Repeat this flag to specify multiple claims.' },
  { section: AUTHN, name: 'oidc-ca-file', type: 'string', default: '', usage: "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file." },
  { section: AUTHN, name: 'oidc-signing-algs', type: 'stringSlice', default: ['RS256'], usage: 'Comma-separated list of allowed JOSE asymmetric signing algorithms.' },
  { section: AUTHN, name: 'authentication-token-webhook-config-file', type: 'string', default: '', usage: 'File with webhook configuration for token authentication in kubeconfig format.' },
  { section: AUTHN, name: 'authentication-token-webhook-cache-ttl', type: 'duration', default: 120_000, usage: 'The duration to cache responses from the webhook token authenticator.' },
  { section: AUTHN, name: 'authentication-token-webhook-version', type: 'string', default: 'v1beta1', usage: 'The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.' },
  { section: AUTHN, name: 'authentication-config', type: 'string', default: '', usage: 'File with Authentication Configuration to configure the JWT Token authenticator.', ...later },
  { section: AUTHN, name: 'requestheader-client-ca-file', type: 'string', default: '', usage: 'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers.' },
  { section: AUTHN, name: 'requestheader-allowed-names', type: 'stringSlice', default: [], usage: 'List of client certificate common names to allow to provide usernames in headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.' },
  { section: AUTHN, name: 'requestheader-username-headers', type: 'stringSlice', default: [], usage: 'List of request headers to inspect for usernames. X-Remote-User is common.' },
  { section: AUTHN, name: 'requestheader-uid-headers', type: 'stringSlice', default: [], usage: 'List of request headers to inspect for UIDs.' },
  { section: AUTHN, name: 'requestheader-group-headers', type: 'stringSlice', default: [], usage: 'List of request headers to inspect for groups. X-Remote-Group is suggested.' },
  { section: AUTHN, name: 'requestheader-extra-headers-prefix', type: 'stringSlice', default: [], usage: 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.' },

  // Authorization
  { section: AUTHZ, name: 'authorization-mode', type: 'stringSlice', default: ['AlwaysAllow'], usage: 'Ordered list of plug-ins to do authorization on secure port: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node.' },
  { section: AUTHZ, name: 'authorization-policy-file', type: 'string', default: '', usage: 'File with authorization policy in json line by line format, used with --authorization-mode=ABAC.' },
  { section: AUTHZ, name: 'authorization-webhook-config-file', type: 'string', default: '', usage: 'File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook.' },
  { section: AUTHZ, name: 'authorization-webhook-cache-authorized-ttl', type: 'duration', default: 300_000, usage: "The duration to cache 'authorized' responses from the webhook authorizer." },
  { section: AUTHZ, name: 'authorization-webhook-cache-unauthorized-ttl', type: 'duration', default: 30_000, usage: "The duration to cache 'unauthorized' responses from the webhook authorizer." },
  { section: AUTHZ, name: 'authorization-webhook-version', type: 'string', default: 'v1beta1', usage: 'The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.' },
  { section: AUTHZ, name: 'authorization-config', type: 'string', default: '', usage: 'File with Authorization Configuration to configure the authorizer chain (apiserver.config.k8s.io/v1, v1beta1 or v1alpha1 AuthorizationConfiguration: authorizers of type Node, RBAC, Webhook, ABAC, AlwaysAllow, AlwaysDeny). Reloaded when the file changes. Webhook matchConditions (CEL) are not supported yet: a file that sets them is refused. Cannot be used with --authorization-mode or --authorization-webhook-*.' },

  // Auditing
  { section: AUDIT, name: 'audit-policy-file', type: 'string', default: '', usage: 'Path to the file that defines the audit policy configuration (audit.k8s.io/v1 Policy). Without it nothing is audited.' },
  { section: AUDIT, name: 'audit-log-path', type: 'string', default: '', usage: "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out." },
  { section: AUDIT, name: 'audit-log-format', type: 'string', default: 'json', usage: 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. Known formats are legacy,json.' },
  { section: AUDIT, name: 'audit-log-maxage', type: 'int', default: 0, usage: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.' },
  { section: AUDIT, name: 'audit-log-maxbackup', type: 'int', default: 0, usage: 'The maximum number of old audit log files to retain. Setting a value of 0 will mean there\'s no restriction on the number of files.' },
  { section: AUDIT, name: 'audit-log-maxsize', type: 'int', default: 0, usage: 'The maximum size in megabytes of the audit log file before it gets rotated (0: 100, lumberjack\'s default, as kube-apiserver 1.33).' },
  { section: AUDIT, name: 'audit-log-compress', type: 'bool', default: false, usage: 'If set, the rotated log files will be compressed using gzip.' },
  { section: AUDIT, name: 'audit-log-mode', type: 'string', default: 'blocking', usage: 'Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.' },
  { section: AUDIT, name: 'audit-log-batch-buffer-size', type: 'int', default: 10000, usage: 'The size of the buffer to store events before batching and writing. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-log-batch-max-size', type: 'int', default: 1, usage: 'The maximum size of a batch. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-log-batch-max-wait', type: 'duration', default: 0, usage: "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode." },
  { section: AUDIT, name: 'audit-log-batch-throttle-enable', type: 'bool', default: false, usage: 'Whether batching throttling is enabled. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-log-batch-throttle-qps', type: 'float', default: 0, usage: 'Maximum average number of batches per second. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-log-batch-throttle-burst', type: 'int', default: 0, usage: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-log-truncate-enabled', type: 'bool', default: false, usage: 'Whether event and batch truncating is enabled.' },
  { section: AUDIT, name: 'audit-log-truncate-max-batch-size', type: 'int', default: 10485760, usage: 'Maximum size of the batch sent to the underlying backend. Actual serialized size can be several hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.' },
  { section: AUDIT, name: 'audit-log-truncate-max-event-size', type: 'int', default: 102400, usage: "Maximum size of the audit event sent to the underlying backend. If the size of an event is greater than this number, first request and response are removed, and if this doesn't reduce the size enough, event is discarded." },
  { section: AUDIT, name: 'audit-log-version', type: 'string', default: 'audit.k8s.io/v1', usage: 'API group and version used for serializing audit events written to log.' },
  { section: AUDIT, name: 'audit-webhook-config-file', type: 'string', default: '', usage: 'Path to a kubeconfig formatted file that defines the audit webhook configuration.' },
  { section: AUDIT, name: 'audit-webhook-initial-backoff', type: 'duration', default: 10_000, usage: 'The amount of time to wait before retrying the first failed request.' },
  { section: AUDIT, name: 'audit-webhook-batch-initial-backoff', type: 'duration', default: 10_000, usage: 'The amount of time to wait before retrying the first failed request. Deprecated, use --audit-webhook-initial-backoff instead.' },
  { section: AUDIT, name: 'audit-webhook-mode', type: 'string', default: 'batch', usage: 'Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.' },
  { section: AUDIT, name: 'audit-webhook-batch-buffer-size', type: 'int', default: 10000, usage: 'The size of the buffer to store events before batching and writing. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-webhook-batch-max-size', type: 'int', default: 400, usage: 'The maximum size of a batch. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-webhook-batch-max-wait', type: 'duration', default: 30_000, usage: "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode." },
  { section: AUDIT, name: 'audit-webhook-batch-throttle-enable', type: 'bool', default: true, usage: 'Whether batching throttling is enabled. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-webhook-batch-throttle-qps', type: 'float', default: 10, usage: 'Maximum average number of batches per second. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-webhook-batch-throttle-burst', type: 'int', default: 15, usage: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.' },
  { section: AUDIT, name: 'audit-webhook-truncate-enabled', type: 'bool', default: false, usage: 'Whether event and batch truncating is enabled.' },
  { section: AUDIT, name: 'audit-webhook-truncate-max-batch-size', type: 'int', default: 10485760, usage: 'Maximum size of the batch sent to the underlying backend. Actual serialized size can be several hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.' },
  { section: AUDIT, name: 'audit-webhook-truncate-max-event-size', type: 'int', default: 102400, usage: "Maximum size of the audit event sent to the underlying backend. If the size of an event is greater than this number, first request and response are removed, and if this doesn't reduce the size enough, event is discarded." },
  { section: AUDIT, name: 'audit-webhook-version', type: 'string', default: 'audit.k8s.io/v1', usage: 'API group and version used for serializing audit events written to webhook.' },

  // API enablement
  { section: API, name: 'runtime-config', type: 'mapStringString', default: {}, usage: 'A set of key=value pairs that enable or disable built-in APIs: v1=true|false for the core group, <group>/<version>=true|false, <group>/<version>/<resource>=true|false, api/all, api/ga, api/beta, api/alpha (=true|false). A disabled version or resource is not served (no routes, discovery or OpenAPI). Default: kube 1.33\'s set (GA versions on; every version Capstan serves is GA).' },

  // Admission
  { section: ADMISSION, name: 'enable-admission-plugins', type: 'stringSlice', default: [], usage: 'admission plugins that should be enabled in addition to default enabled ones (NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition, PodSecurity, Priority, DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, PersistentVolumeClaimResize, RuntimeClass, CertificateApproval, CertificateSigning, ClusterTrustBundleAttest, CertificateSubjectRestriction, DefaultIngressClass, PodTopologyLabels, MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota). Comma-delimited list of admission plugins: AlwaysAdmit, AlwaysDeny, AlwaysPullImages, CertificateApproval, CertificateSigning, CertificateSubjectRestriction, ClusterTrustBundleAttest, DefaultIngressClass, DefaultStorageClass, DefaultTolerationSeconds, DenyServiceExternalIPs, EventRateLimit, ExtendedResourceToleration, ImagePolicyWebhook, LimitPodHardAntiAffinityTopology, LimitRanger, MutatingAdmissionPolicy, MutatingAdmissionWebhook, NamespaceAutoProvision, NamespaceExists, NamespaceLifecycle, NodeRestriction, OwnerReferencesPermissionEnforcement, PersistentVolumeClaimResize, PodNodeSelector, PodSecurity, PodTolerationRestriction, PodTopologyLabels, Priority, ResourceQuota, RuntimeClass, ServiceAccount, StorageObjectInUseProtection, TaintNodesByCondition, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook. The order of plugins in this flag does not matter. Capstan accepts but does not implement (they have no effect): ClusterTrustBundleAttest, DenyServiceExternalIPs, EventRateLimit, ExtendedResourceToleration, ImagePolicyWebhook, LimitPodHardAntiAffinityTopology, NamespaceAutoProvision, NamespaceExists, OwnerReferencesPermissionEnforcement, PodNodeSelector, PodTolerationRestriction, PodTopologyLabels, MutatingAdmissionPolicy.' },
  { section: ADMISSION, name: 'disable-admission-plugins', type: 'stringSlice', default: [], usage: 'admission plugins that should be disabled although they are in the default enabled plugins list (see --enable-admission-plugins for both lists). The order of plugins in this flag does not matter. Disabling NamespaceLifecycle lets content be created in missing or terminating namespaces and the system namespaces be deleted, as in kube.' },
  { section: ADMISSION, name: 'admission-control-config-file', type: 'string', default: '', usage: 'File with admission control configuration: an AdmissionConfiguration (apiserver.config.k8s.io/v1) whose plugins carry a configuration inline or a path relative to this file (PodSecurity reads a PodSecurityConfiguration).' },

  // Misc
  { section: MISC, name: 'allow-privileged', type: 'bool', default: false, usage: 'If true, allow privileged containers.', ...later },
  { section: MISC, name: 'service-cluster-ip-range', type: 'string', default: '', usage: 'A CIDR notation IP range from which to assign service cluster IPs (at most two, dual-stack). Unset: 10.0.0.0/24. Served as the "kubernetes" ServiceCIDR; each allocated IP is an IPAddress object.' },
  { section: MISC, name: 'service-node-port-range', type: 'string', default: '30000-32767', usage: 'A port range to reserve for services with NodePort visibility, inclusive: N1-N2.' },
  { section: MISC, name: 'feature-gates', type: 'mapStringBool', default: {}, usage: 'A set of key=value pairs that describe feature gates for alpha/experimental features.', ...later },
  { section: MISC, name: 'proxy-client-cert-file', type: 'string', default: '', usage: 'Client certificate used to prove the identity of the aggregator or kube-apiserver when it must call out during a request. Capstan presents it to the servers of remote APIServices (with the identity in the --requestheader-*-headers headers).' },
  { section: MISC, name: 'proxy-client-key-file', type: 'string', default: '', usage: 'Private key for the client certificate in --proxy-client-cert-file.' },
  { section: MISC, name: 'enable-aggregator-routing', type: 'bool', default: false, usage: 'Turns on aggregator routing requests to endpoints IP rather than cluster IP. Capstan has no kube-proxy and always routes to endpoint IPs; the flag changes nothing.', ...later },
  { section: MISC, name: 'endpoint-reconciler-type', type: 'string', default: 'lease', usage: 'Use an endpoint reconciler (master-count, lease, none).', ...later },
  { section: MISC, name: 'kubelet-client-certificate', type: 'string', default: '', usage: 'Path to a client cert file for TLS to kubelets.', ...later },
  { section: MISC, name: 'kubelet-client-key', type: 'string', default: '', usage: 'Path to a client key file for TLS to kubelets.', ...later },
  { section: MISC, name: 'kubelet-certificate-authority', type: 'string', default: '', usage: 'Path to a cert file for the certificate authority of kubelets.', ...later },
  { section: MISC, name: 'enable-garbage-collector', type: 'bool', default: true, usage: 'Enables the generic garbage collector.', ...later },
  { section: MISC, name: 'profiling', type: 'bool', default: true, usage: 'Enable profiling via web interface host:port/debug/pprof/.' },

  // Logs
  { section: LOGS, name: 'v', shorthand: 'v', type: 'int', default: 0, usage: 'Number for the log level verbosity.', ...later },
  { section: LOGS, name: 'vmodule', type: 'stringSlice', default: [], usage: 'Comma-separated list of pattern=N settings for file-filtered logging.', ...later },

  // Metrics
  { section: METRICS, name: 'disabled-metrics', type: 'stringSlice', default: [], usage: 'Metric names (fully qualified, e.g. apiserver_request_total) to turn off: they are neither recorded nor served at /metrics. Turning off every request or flow-control family also takes its per-request recording off the request path.' },

  // Capstan
  { section: CAPSTAN, name: 'data-dir', type: 'string', default: '.capstan', usage: 'Directory for Capstan state: the embedded store (<data-dir>/store, used when --etcd-servers is empty) and the admin kubeconfig (<data-dir>/admin.kubeconfig). Relative to the working directory.' },
];
