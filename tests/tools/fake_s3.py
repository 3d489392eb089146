#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A fake S3 server for lidiagen's shell tests: strict about SigV4, easy to break.

Run with Debian's /usr/bin/python3 (python3-botocore checks the signatures).
Listens on 127.0.0.1 only, on a port the OS picks, written to --port-file
(FILE.tmp, then renamed) once listening; contacts no other address; SIGTERM
or SIGINT stop it cleanly (exit 0).

    fake_s3.py --port-file F [--log F.jsonl] --access-key AK --secret-key SK
               [--session-token TOK] [--region us-east-1] [--bucket NAME]...
               [--max-skew-seconds 900] [--verbose] [--imds-role NAME
               --imds-access-key AK --imds-secret-key SK --imds-token TOK]
               [--web-identity-token JWT] [--role-arn ARN]
               [--container-token TOK] [--issue-seconds 3600] [--revoke-after S]
               [--imds-expiry-seconds 21600]

S3, path style (/BUCKET/KEY, the key URL-decoded), in memory; each --bucket
exists, empty. PUT /b/k stores body, Content-Type and x-amz-meta-* (200,
ETag "md5hex"); HEAD and GET /b/k give Content-Length, ETag, Content-Type,
Last-Modified, x-amz-meta-* (404 NoSuchKey); GET /b?list-type=2 is
ListObjectsV2 (prefix, delimiter, encoding-type=url, max-keys <= 1000, never
truncated); a missing bucket is 404 NoSuchBucket; anything else 501
NotImplemented. Errors are S3's XML <Error>; HEAD has no body, so the code
is in an x-amz-error-code header.

The checks on every S3 request, in S3's order (headers before body):
  Authorization "AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/s3/aws4_request,
    SignedHeaders=..., Signature=..." well formed, host and x-amz-date
    signed, every x-amz-* header sent signed          403 AccessDenied
  AK accepted                                         403 InvalidAccessKeyId
  REGION = --region, service s3, DATE = x-amz-date's  400 AuthorizationHeaderMalformed
  x-amz-date within --max-skew-seconds of now         403 RequestTimeTooSkewed
  x-amz-security-token sent, signed and equal when the credentials have one
    (absent when they have none)                      403 InvalidToken
    and no expire_token fault                         400 ExpiredToken
  x-amz-content-sha256 sent and signed                400 InvalidRequest
    (STREAMING-* aws-chunked payloads                 501 NotImplemented)
  the signature recomputed by botocore's S3SigV4Auth over the request as
    received: raw path and query, only the SignedHeaders, x-amz-content-sha256
    as payload hash                                   403 SignatureDoesNotMatch
    (the message shows botocore's canonical request and string to sign)
  x-amz-content-sha256 = sha256(body) or UNSIGNED-PAYLOAD
                                                      400 XAmzContentSHA256Mismatch
  Content-MD5, if sent, = base64(md5(body))           400 BadDigest
Accepted credentials: (--access-key, --secret-key, --session-token) and, if
given, (--imds-access-key, --imds-secret-key, --imds-token).

Control API (no authentication, not logged):
  POST /_control/faults      JSON body: the fault plan, replacing the old one
  GET  /_control/faults      the plan, counts as used up so far
  GET  /_control/log         JSON list of the S3 and IMDS requests so far
  POST /_control/log/clear   empty it
  PUT|DELETE /_control/object/B/K   store (body, Content-Type, x-amz-meta-*;
                             the bucket is made) or delete an object
  GET  /_control/object/B/K  its raw body, Content-Type, ETag (404 if missing)
  GET  /_control/meta/B/K    JSON {"x-amz-meta-NAME": value, ...} (lower case)
A log record: {"method", "path" (raw), "query", "bucket", "key", "status",
"code", "bytes_in", "signed_headers", "content_type", "meta", "access_key",
"token" (one was sent), "expect", "imds", "time", "path_canonical",
"if_none_match", "if_match" (the conditions sent, or null)}, also
appended as a JSON line to --log. The signature is checked over the path as
sent, as S3 does; "path_canonical" tells whether that path is the key as
SigV4's UriEncode writes it (RFC 3986 unreserved characters bare, all else
%XX), so a test can catch a client that encodes otherwise.

Faults (a count N: the next N S3 requests that passed authentication):
  slowdown N, retry_after S   503 SlowDown, with Retry-After: S if given
  status_429 N                429 TooManyRequests
  internal_error N            500 InternalError
  stall N, stall_seconds S    sleep S (default 60) before answering, sending
                              nothing (a 100 Continue may have gone already)
  reset_put N                 the next N PUTs with a body (before any check): read half
                              the body, then reset the connection (RST)
  deny true                   every S3 request: 403 AccessDenied
  deny_put N                  the next N PUTs with a body: the body read whole,
                              then 403 AccessDenied (a policy refusing writes)
  expire_token true           requests with a session token: 400 ExpiredToken
  corrupt_body N              the next N bodies get a byte flipped on arrival,
                              as if damaged on the way (the checksums see it)
  clock_offset S              this server's clock runs S seconds ahead (skew)
  The five below leave a bucket check (list-type=2&max-keys=0) alone, so
  that a run starts before the server goes wrong:
  bad_list N, bad_list_body B the next N ListObjectsV2 pages answered 200
                              with B: "error" (an S3
                              <Error>, the default), "html" (a proxy's page),
                              "truncated" (the real page cut in half)
  bad_put N                   the next N PUTs answered 200 with an <Error>
                              body; nothing stored
  close N                     the next N S3 requests: the connection closed
                              without an answer (a server gone)
  stall_body N                the next N answers: a status line, then
                              nothing for stall_seconds, then closed
  trickle N                   the next N answers sent a byte a second
  conflict N                  the next N conditional PUTs: 409
                              ConditionalRequestConflict, nothing written
  plant N, plant_from B/K     the next N PUTs: the object at B/K copied to
                              the PUT's key first, as if another publisher
                              had just written it (then the conditions apply)
  vanish N                    the next N PUTs: the key deleted first
  race_id NAME                conflict, plant and vanish only touch PUTs of
                              keys ending in /NAME (a build ID, say)
Conditional writes, as AWS documents them, the check and the write atomic
(under the state's lock): PUT with If-None-Match: * on an existing key, or
If-Match: ETAG naming another ETag, 412 PreconditionFailed; If-Match on a
missing key 404 NoSuchKey. --ignore-conditions ignores both headers, as
s3rver does. DELETE /b/k removes an object (204, also when missing).
ListObjectsV2 pages hold at most --page-size keys (default 1000), with
continuation tokens. HEAD /BUCKET is HeadBucket: 200, or 404 for a bucket that does not exist.

Fake EC2 instance metadata, IMDSv2 (logged with "imds": true):
  PUT /latest/api/token       X-aws-ec2-metadata-token-ttl-seconds 1..21600
                              needed; the token as text (other methods 405)
  GET /latest/meta-data/iam/security-credentials/       the role name
  GET /latest/meta-data/iam/security-credentials/ROLE   JSON credentials
The GETs need a valid X-aws-ec2-metadata-token header, else 401.

Fake STS and container agent (logged with "creds": "sts" or "container"),
issuing new temporary credentials each time (ASIAFAKE..., a fresh secret
and session token) that S3 then accepts until --issue-seconds (default
3600) have passed (or --revoke-after, earlier than they say), and answers
400 ExpiredToken after:
  POST /_sts (or GET /_sts?...)  the Query API, Version 2011-06-15:
      Action=AssumeRoleWithWebIdentity: WebIdentityToken must be
        --web-identity-token (else 403 AccessDenied);
      Action=AssumeRole: SigV4-signed (service sts) with credentials S3
        accepts, checked by botocore;
      both: RoleArn must be --role-arn when given, RoleSessionName set; the
      answer <ACTIONResponse><ACTIONResult><Credentials>..., or an
      <ErrorResponse><Error><Code>.
  GET /_container/creds           Authorization must be --container-token
                                  (else 401); JSON AccessKeyId,
                                  SecretAccessKey, Token, Expiration.
"""
import argparse
import base64
import datetime
import hashlib
import hmac
import json
import os
import secrets
import signal
import socket
import struct
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, quote, unquote
from xml.sax.saxutils import escape

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.compat import HTTPHeaders
from botocore.credentials import Credentials

AMZ_DATE = '%Y%m%dT%H%M%SZ'
FAULT_KEYS = ('slowdown', 'retry_after', 'status_429', 'internal_error',
              'reset_put', 'stall', 'stall_seconds', 'deny', 'expire_token',
              'corrupt_body', 'clock_offset', 'bad_list', 'bad_list_body',
              'bad_put', 'close', 'stall_body', 'trickle', 'deny_put')
FAULT_KEYS += ('conflict', 'plant', 'plant_from', 'vanish', 'race_id')  # conditional writes
PAGE_SIZE = [1000]  # --page-size
XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
# S3's status and message for each error code we give.
ERRORS = {code: (int(status), message) for code, status, message in (
    line.split(' ', 2) for line in """
AccessDenied 403 Access Denied
InvalidAccessKeyId 403 The AWS Access Key Id you provided does not exist in our records.
AuthorizationHeaderMalformed 400 The authorization header is malformed.
RequestTimeTooSkewed 403 The difference between the request time and the current time is too large.
InvalidToken 403 The provided token is malformed or otherwise invalid.
ExpiredToken 400 The provided token has expired.
InvalidRequest 400 Missing required header for this request: x-amz-content-sha256.
SignatureDoesNotMatch 403 The request signature we calculated does not match the signature you provided. Check your key and signing method.
XAmzContentSHA256Mismatch 400 The provided 'x-amz-content-sha256' header does not match what was computed.
BadDigest 400 The Content-MD5 you specified did not match what we received.
NoSuchBucket 404 The specified bucket does not exist
NoSuchKey 404 The specified key does not exist.
NotImplemented 501 A header you provided implies functionality that is not implemented
SlowDown 503 Please reduce your request rate.
TooManyRequests 429 Please reduce your request rate.
InternalError 500 We encountered an internal error. Please try again.
PreconditionFailed 412 At least one of the pre-conditions you specified did not hold
ConditionalRequestConflict 409 A conflicting conditional operation is currently in progress against this resource. Please try again.
""".strip().splitlines())}


class S3Error(Exception):
    """An S3 error: code, S3's message plus DETAIL, extra XML elements."""

    def __init__(self, code, detail='', extra=(), headers=()):
        self.status, self.message = ERRORS[code]
        if detail:
            self.message += ' (%s)' % detail
        super().__init__(self.message)
        self.code, self.key = code, None
        self.extra, self.headers = list(extra), list(headers)


class Obj:
    def __init__(self, body, content_type, meta):
        self.body, self.content_type, self.meta = body, content_type, meta
        self.etag = '"%s"' % hashlib.md5(body).hexdigest()
        self.mtime = time.time()


class State:
    """Everything the threads share, behind one lock."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.buckets = {name: {} for name in args.bucket}
        self.faults = {}
        self.log = []
        self.imds_tokens = {}  # token -> expiry (epoch seconds)
        self.issued_expiry = {}  # access key -> expiry, of credentials issued here
        # The (access key, secret key, session token or None) accepted.
        self.creds = [(args.access_key, args.secret_key, args.session_token)]
        if args.imds_access_key:
            self.creds.append((args.imds_access_key, args.imds_secret_key,
                               args.imds_token))

    def take_fault(self, name):
        """Use up one of the fault count NAME; true if there was one."""
        with self.lock:
            if self.faults.get(name, 0) > 0:
                self.faults[name] -= 1
                return True
            return False

    def fault_value(self, name, default=None):
        with self.lock:
            return self.faults.get(name, default)

    def record(self, rec):
        with self.lock:
            self.log.append(rec)
            if self.args.log:
                with open(self.args.log, 'a') as f:
                    f.write(json.dumps(rec) + '\n')


# ---------------------------------------------------------------- signatures

class ClientHeadersSigner(S3SigV4Auth):
    """botocore's S3 signer, made to sign exactly the client's SignedHeaders.

    SigV4Auth.headers_to_sign() takes every header of the request except a
    blacklist (expect, user-agent, ...) and adds host; a client may sign any
    set, so we give botocore that set, values as received, and nothing else.
    S3SigV4Auth (unlike SigV4Auth) leaves the path as it is: S3 does not
    normalise it or encode it a second time."""

    def __init__(self, credentials, region, signed_names, service='s3'):
        super().__init__(credentials, service, region)
        self._signed_names = signed_names

    def headers_to_sign(self, request):
        header_map = HTTPHeaders()
        for name in self._signed_names:
            for value in request.headers.get_all(name) or []:
                header_map[name] = value  # HTTPMessage appends repeats
        return header_map


def botocore_signature(cred, region, method, url, body, signed_names, headers,
                       amz_date, service='s3'):
    """Return (signature, canonical request, string to sign) per botocore."""
    request = AWSRequest(method=method, url=url, data=body)
    for name in signed_names:
        for value in headers.get_all(name) or []:
            request.headers[name] = value
    # Not add_auth(): it takes the clock's time and rewrites headers. The
    # lower-level steps take the client's x-amz-date from the context, and
    # canonical_request() takes the X-Amz-Content-SHA256 header as the
    # payload hash when the request has one (we require it signed).
    request.context['timestamp'] = amz_date
    signer = ClientHeadersSigner(Credentials(*cred), region, signed_names,
                                 service)
    canonical = signer.canonical_request(request)
    string_to_sign = signer.string_to_sign(request, canonical)
    return signer.signature(string_to_sign, request), canonical, string_to_sign


def parse_authorization(value):
    """Split the Authorization header into (scope, signed names, signature)."""
    if not value:
        raise S3Error('AccessDenied', 'no Authorization header; query-string '
                      'authentication is not supported here')
    algorithm, _, rest = value.partition(' ')
    if algorithm != 'AWS4-HMAC-SHA256':
        raise S3Error('AccessDenied', 'authorization type %r: only '
                      'AWS4-HMAC-SHA256 is accepted' % algorithm)
    fields = dict(part.strip().partition('=')[::2] for part in rest.split(','))
    for name in ('Credential', 'SignedHeaders', 'Signature'):
        if not fields.get(name):
            raise S3Error('AccessDenied', 'malformed Authorization header, no '
                          '%s= in %r' % (name, value))
    scope = fields['Credential'].split('/')
    if len(scope) != 5 or scope[4] != 'aws4_request':
        raise S3Error('AccessDenied', 'malformed Authorization header: '
                      'Credential=%s is not AK/DATE/REGION/SERVICE/aws4_request'
                      % fields['Credential'])
    return scope, fields['SignedHeaders'].split(';'), fields['Signature']


def authenticate(state, handler, url, body, rec):
    """Run the docstring's checks on one request, in its order, or raise."""
    h = handler.headers
    scope, signed, signature = parse_authorization(h.get('Authorization'))
    access_key, date, region, service, _ = scope
    rec['signed_headers'], rec['access_key'] = signed, access_key
    for name in ('host', 'x-amz-date'):
        if name not in signed:
            raise S3Error('AccessDenied', 'the %s header must be signed' % name)
    for name in signed:
        if h.get(name) is None:
            raise S3Error('AccessDenied', 'signed header %r is not in the '
                          'request' % name)
    unsigned = sorted({n.lower() for n in h.keys()
                       if n.lower().startswith('x-amz-')} - set(signed))
    if unsigned:
        raise S3Error('AccessDenied', 'there were headers present in the '
                      'request which were not signed: ' + ', '.join(unsigned))
    cred = next((c for c in state.creds if c[0] == access_key), None)
    if cred is None:
        raise S3Error('InvalidAccessKeyId', access_key)
    if state.issued_expiry.get(access_key, float('inf')) < time.time():
        rec['code'] = 'ExpiredToken'
        raise S3Error('ExpiredToken', 'issued credentials %s expired' % access_key)
    amz_date = h['x-amz-date']
    if service != 's3' or region != state.args.region or date != amz_date[:8]:
        raise S3Error('AuthorizationHeaderMalformed', 'scope %s/%s/%s, '
                      'expected %s/%s/s3' % (date, region, service,
                                             amz_date[:8], state.args.region))
    check_time(amz_date, state.args.max_skew_seconds,
               float(state.fault_value('clock_offset', 0) or 0))
    check_token(state, cred, h.get('x-amz-security-token'), signed, rec)
    payload_hash = h.get('x-amz-content-sha256')
    if payload_hash is None or 'x-amz-content-sha256' not in signed:
        raise S3Error('InvalidRequest', 'it must be sent and signed')
    if payload_hash.startswith('STREAMING-'):
        raise S3Error('NotImplemented', 'aws-chunked uploads (%s) are not '
                      'supported by this fake' % payload_hash)
    mine, canonical, sts = botocore_signature(
        cred, region, handler.command, url, body, signed, h, amz_date)
    if not hmac.compare_digest(mine, signature.lower()):
        raise S3Error('SignatureDoesNotMatch', 'canonical request '
                      '(botocore):\n%s\nstring to sign:\n%s' % (canonical, sts),
                      extra=[('CanonicalRequest', canonical),
                             ('StringToSign', sts),
                             ('SignatureProvided', signature)])
    if payload_hash not in ('UNSIGNED-PAYLOAD', hashlib.sha256(body).hexdigest()):
        raise S3Error('XAmzContentSHA256Mismatch', extra=[
            ('ClientComputedContentSHA256', payload_hash),
            ('S3ComputedContentSHA256', hashlib.sha256(body).hexdigest())])
    md5 = h.get('Content-MD5')
    if md5 is not None and md5.strip() != base64.b64encode(
            hashlib.md5(body).digest()).decode():
        raise S3Error('BadDigest')


def check_time(amz_date, max_skew, offset=0.0):
    """offset: the clock_offset fault, this server's clock set that far ahead."""
    try:
        when = datetime.datetime.strptime(amz_date, AMZ_DATE).replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        raise S3Error('AccessDenied', 'x-amz-date %r is not a valid date'
                      % amz_date)
    if abs(time.time() + offset - when) > max_skew:
        raise S3Error('RequestTimeTooSkewed', 'request time %s' % amz_date)


def check_token(state, cred, token, signed, rec):
    rec['token'] = token is not None
    expected = cred[2]
    if token is None and expected is None:
        return
    why = ('no x-amz-security-token header' if token is None else
           'these credentials take no session token' if expected is None else
           'x-amz-security-token is not signed'
           if 'x-amz-security-token' not in signed else
           'not the token issued' if not hmac.compare_digest(token, expected)
           else None)
    if why:
        raise S3Error('InvalidToken', why)
    if state.fault_value('expire_token'):
        raise S3Error('ExpiredToken')


# ---------------------------------------------------------------- S3 objects

def object_headers(obj):
    headers = [('ETag', obj.etag), ('Content-Type', obj.content_type),
               ('Last-Modified', formatdate(obj.mtime, usegmt=True))]
    return headers + sorted(obj.meta.items())


def meta_headers(headers):
    return {n.lower(): v for n, v in headers.items()
            if n.lower().startswith('x-amz-meta-')}


def xml_text(value):
    """Escaped as S3 and s3rver do: markup by name, quotes and control
    characters as hex references (&#x27;, &#x0D;), so clients must read both."""
    out = escape(str(value))
    return ''.join('&#x%02X;' % ord(c) if c in '\'"' or ord(c) < 32 else c
                   for c in out)


def xml_elements(pairs):
    return ''.join('<%s>%s</%s>' % (tag, xml_text(value), tag)
                   for tag, value in pairs)


def list_objects_v2(bucket_name, bucket, q):
    """ListObjectsV2 XML for the query's prefix, delimiter and max-keys."""
    prefix, delim = q.get('prefix', ''), q.get('delimiter', '')
    max_keys = min(int(q.get('max-keys') or 1000), PAGE_SIZE[0])
    # The continuation token is the last key of the page before, base64'd.
    after = base64.b64decode(q.get('continuation-token', '')).decode()
    truncated = False
    # With encoding-type=url clients decode the keys (botocore: unquote_plus),
    # so a "+" or "%" in a key must be encoded or it comes back wrong.
    url = q.get('encoding-type') == 'url'
    enc = (lambda s: quote(s, safe='/~')) if url else (lambda s: s)
    contents, prefixes = [], []
    last = None
    for key in sorted(k for k in bucket if k.startswith(prefix) and k > after):
        cut = key.find(delim, len(prefix)) if delim else -1
        if cut >= 0 and key[:cut + len(delim)] in prefixes:
            continue
        if len(contents) + len(prefixes) == max_keys:
            truncated = max_keys > 0
            break
        last = key
        if cut >= 0:
            prefixes.append(key[:cut + len(delim)])
            continue
        obj = bucket[key]
        mtime = datetime.datetime.fromtimestamp(obj.mtime, datetime.timezone.utc)
        contents.append('<Contents>%s</Contents>' % xml_elements([
            ('Key', enc(key)), ('LastModified', mtime.strftime(
                '%Y-%m-%dT%H:%M:%S.000Z')), ('ETag', obj.etag),
            ('Size', len(obj.body)), ('StorageClass', 'STANDARD')]))
    common = ''.join('<CommonPrefixes>%s</CommonPrefixes>'
                     % xml_elements([('Prefix', enc(p))]) for p in prefixes)
    head = [('Name', bucket_name), ('Prefix', enc(prefix))]
    head += [('Delimiter', enc(delim))] if delim else []
    head += [('EncodingType', 'url')] if url else []
    head += [('KeyCount', len(contents) + len(prefixes)),
             ('MaxKeys', max_keys), ('IsTruncated', 'true' if truncated else 'false')]
    if truncated and last is not None:
        head += [('NextContinuationToken',
                  base64.b64encode(last.encode()).decode())]
    return (XML_HEAD + '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/'
            '2006-03-01/">%s%s%s</ListBucketResult>' % (
                xml_elements(head), ''.join(contents), common)).encode()


def canonical_path(bucket, key):
    """The path as SigV4's UriEncode (RFC 3986 unreserved bare) has it."""
    return '/' + quote(bucket, safe='') + ('/' + quote(key) if key else '')


# ---------------------------------------------------------------- handler

class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1: keep-alive, and handle_expect_100() answers "Expect:
    # 100-continue" with "100 Continue" before we read the body.
    protocol_version = 'HTTP/1.1'
    server_version = 'fake_s3/1'

    @property
    def state(self):
        return self.server.state

    def log_message(self, fmt, *args):
        if self.state.args.verbose:
            super().log_message(fmt, *args)

    def do_GET(self):
        raw_path, _, raw_query = self.path.partition('?')
        try:
            if raw_path.startswith('/_control/'):
                self.control(raw_path)
            elif raw_path.startswith('/latest/'):
                self.imds(raw_path)
            elif raw_path == '/_sts':
                self.sts(raw_query)
            elif raw_path == '/_container/creds':
                self.container()
            else:
                self.s3(raw_path, raw_query)
        except ConnectionError:  # the client went away: so do we
            self.close_connection = True

    do_PUT = do_HEAD = do_POST = do_DELETE = do_GET

    # ---- plumbing

    def read_body(self):
        if 'chunked' in self.headers.get('Transfer-Encoding', '').lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b';')[0] or b'0', 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers, then CRLF
                        pass
                    return b''.join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length)
        if len(body) != length:
            raise ConnectionError('the body ended early')
        return body

    def respond(self, status, body=b'', headers=(), content_type=None):
        """Send a whole response; Content-Length always (HEAD: no body)."""
        self.send_response(status)
        if content_type:
            self.send_header('Content-Type', content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def respond_json(self, status, value):
        self.respond(status, json.dumps(value, indent=1).encode() + b'\n',
                     content_type='application/json')

    def respond_error(self, err):
        request_id = secrets.token_hex(8).upper()
        headers = err.headers + [('x-amz-request-id', request_id)]
        if self.command == 'HEAD':  # no body: say it in headers, one line
            self.respond(err.status, b'', headers + [
                ('x-amz-error-code', err.code), ('x-amz-error-message',
                                                 err.message.replace('\n', ' | ')[:2000])])
            return
        pairs = [('Code', err.code), ('Message', err.message)]
        pairs += [('Key', err.key)] if err.key else []
        body = '<Error>%s</Error>' % xml_elements(
            pairs + err.extra + [('RequestId', request_id)])
        self.respond(err.status, (XML_HEAD + body).encode(), headers,
                     'application/xml')

    def reset_connection(self):
        """Abort with a TCP RST: linger on with a 0 timeout, then close.

        rfile holds a reference to the socket: close it first, or the real
        close would wait for the server's shutdown(), which sends a FIN
        first (a clean end of stream to the client, not a reset)."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                   struct.pack('ii', 1, 0))
        self.rfile.close()
        self.connection.close()
        self.close_connection = True

    # ---- S3

    def s3(self, raw_path, raw_query):
        bucket, _, key = raw_path[1:].partition('/')
        bucket, key = unquote(bucket), unquote(key)
        rec = {'method': self.command, 'path': raw_path, 'query': raw_query,
               'bucket': bucket, 'key': key, 'status': None, 'code': None,
               'bytes_in': 0, 'signed_headers': [],
               'content_type': self.headers.get('Content-Type'),
               'meta': meta_headers(self.headers), 'access_key': None,
               'token': False, 'expect': self.headers.get('Expect'),
               'imds': False, 'time': time.time(),
               'path_canonical': raw_path == canonical_path(bucket, key)}
        rec['if_none_match'] = self.headers.get('If-None-Match')
        rec['if_match'] = self.headers.get('If-Match')
        try:
            if (self.command == 'PUT' and self.headers.get('Content-Length', '0') != '0'
                    and self.state.take_fault('reset_put')):
                length = int(self.headers.get('Content-Length') or 0)
                rec['bytes_in'] = len(self.rfile.read(length // 2))
                rec['code'] = 'fault:reset_put'
                return self.reset_connection()
            body = self.read_body()
            rec['bytes_in'] = len(body)
            if body and self.state.take_fault('corrupt_body'):
                # As if a byte had flipped on the way: the checksums must catch it.
                body = bytes([body[0] ^ 1]) + body[1:]
            url = 'http://127.0.0.1:%d%s' % (self.server.server_address[1],
                                             self.path)
            authenticate(self.state, self, url, body, rec)
            self.apply_faults()
            if 'max-keys=0' not in raw_query and self.answer_instead(rec):
                return
            status, out, headers, ctype = self.s3_operation(
                bucket, key, raw_query, body)
            rec['status'] = status
            self.respond_faulty(rec, key, raw_query, status, out, headers, ctype)
        except S3Error as err:
            rec['status'], rec['code'] = err.status, err.code
            err.key = key or None
            self.respond_error(err)
        finally:
            self.state.record(rec)

    def apply_faults(self):
        state = self.state
        if state.fault_value('deny'):
            raise S3Error('AccessDenied', 'deny fault')
        if (self.command == 'PUT' and self.headers.get('Content-Length', '0') != '0'
                and state.take_fault('deny_put')):
            raise S3Error('AccessDenied', 'deny_put fault')
        if state.take_fault('stall'):
            time.sleep(float(state.fault_value('stall_seconds', 60)))
        if state.take_fault('slowdown'):
            after = state.fault_value('retry_after')
            raise S3Error('SlowDown', headers=[] if after is None else [
                ('Retry-After', str(after))])
        for name, code in (('status_429', 'TooManyRequests'),
                           ('internal_error', 'InternalError')):
            if state.take_fault(name):
                raise S3Error(code)

    def answer_instead(self, rec):
        """The faults that answer before the operation: true if one did."""
        state = self.state
        if state.take_fault('close'):
            rec['code'] = 'fault:close'
            self.close_connection = True  # no answer at all
            return True
        if state.take_fault('stall_body'):
            rec['code'] = 'fault:stall_body'
            self.wfile.write(b'HTTP/1.1 200 OK\r\n')  # and never the rest
            time.sleep(float(state.fault_value('stall_seconds', 60)))
            self.close_connection = True
            return True
        if self.command == 'PUT' and state.take_fault('bad_put'):
            rec['status'], rec['code'] = 200, 'fault:bad_put'
            self.respond(200, (XML_HEAD + '<Error><Code>InternalError</Code><Message>'
                               'not stored</Message></Error>').encode(), (),
                         'application/xml')
            return True
        return False

    def respond_faulty(self, rec, key, raw_query, status, out, headers, ctype):
        """respond(), unless bad_list, stall_body or trickle says otherwise."""
        state = self.state
        if 'max-keys=0' in raw_query:
            return self.respond(status, out, headers, ctype)
        listing = self.command == 'GET' and not key and 'list-type=2' in raw_query
        if listing and state.take_fault('bad_list'):
            kind = state.fault_value('bad_list_body', 'error')
            rec['code'] = 'fault:bad_list:' + kind
            out = {'error': (XML_HEAD + '<Error><Code>SlowDown</Code><Message>'
                             'Please reduce your request rate.</Message></Error>').encode(),
                   'html': b'<!DOCTYPE html>\n<html><body><h1>Proxy</h1></body></html>\n',
                   'truncated': out[:len(out) // 2]}[kind]
        if state.take_fault('trickle'):
            rec['code'] = 'fault:trickle'
            self.send_response(status)
            self.send_header('Content-Length', str(len(out)))
            self.end_headers()
            for i in range(len(out) if self.command != 'HEAD' else 0):
                self.wfile.write(out[i:i + 1])
                time.sleep(1)
            return
        self.respond(status, out, headers, ctype)

    def s3_operation(self, bucket_name, key, raw_query, body):
        """Do the request; return (status, body, headers, content type)."""
        query = dict(parse_qsl(raw_query, keep_blank_values=True))
        query.pop('x-id', None)  # some SDKs add ?x-id=OperationName
        what = '%s %s' % (self.command, self.path)
        if not bucket_name:
            raise S3Error('NotImplemented', 'ListBuckets')
        with self.state.lock:
            bucket = self.state.buckets.get(bucket_name)
            if bucket is None:
                raise S3Error('NoSuchBucket', extra=[('BucketName',
                                                      bucket_name)])
            if not key and not query and self.command == 'HEAD':
                return 200, b'', [], None  # HeadBucket
            if not key and self.command == 'GET' and query.get('list-type') == '2':
                return (200, list_objects_v2(bucket_name, bucket, query), [],
                        'application/xml')
            if not key or query:
                raise S3Error('NotImplemented', what)
            if self.command == 'PUT':
                self.check_conditions(bucket, key)
                bucket[key] = obj = Obj(body, self.headers.get(
                    'Content-Type', 'binary/octet-stream'),
                    meta_headers(self.headers))
                return 200, b'', [('ETag', obj.etag)], None
            if self.command == 'DELETE':
                bucket.pop(key, None)
                return 204, b'', [], None
            if self.command in ('GET', 'HEAD'):
                if key not in bucket:
                    raise S3Error('NoSuchKey')
                return 200, bucket[key].body, object_headers(bucket[key]), None
        raise S3Error('NotImplemented', what)

    def check_conditions(self, bucket, key):
        """A PUT's If-None-Match and If-Match (the caller holds the lock)."""
        state, none = self.state, self.headers.get('If-None-Match')
        match = self.headers.get('If-Match')
        race_id = state.faults.get('race_id')
        if race_id and not key.endswith('/' + race_id):
            race_id = False  # the faults below are for another key
        if race_id is not False and state.faults.get('plant', 0) > 0:
            state.faults['plant'] -= 1
            src, _, src_key = state.faults.get('plant_from', '').partition('/')
            bucket[key] = state.buckets[src][src_key]
        if race_id is not False and state.faults.get('vanish', 0) > 0:
            state.faults['vanish'] -= 1
            bucket.pop(key, None)
        if state.args.ignore_conditions or (none is None and match is None):
            return
        if race_id is not False and state.faults.get('conflict', 0) > 0:
            state.faults['conflict'] -= 1
            raise S3Error('ConditionalRequestConflict')
        if none is not None and none.strip() == '*' and key in bucket:
            raise S3Error('PreconditionFailed', extra=[('Condition', 'If-None-Match')])
        if match is not None and key not in bucket:
            raise S3Error('NoSuchKey')
        if match is not None and match.strip() != bucket[key].etag:
            raise S3Error('PreconditionFailed', extra=[('Condition', 'If-Match')])

    # ---- control API

    def control(self, raw_path):
        body = self.read_body()
        state, cmd = self.state, self.command
        what, _, rest = raw_path[len('/_control/'):].partition('/')
        bucket, _, key = rest.partition('/')
        if what == 'faults' and cmd == 'POST':
            try:
                plan = json.loads(body or b'{}')
                unknown = sorted(set(plan) - set(FAULT_KEYS))
            except (ValueError, TypeError) as e:
                return self.respond_json(400, {'not a JSON object': str(e)})
            if unknown:
                return self.respond_json(400, {'unknown fault keys': unknown})
            with state.lock:
                state.faults = plan
            return self.respond_json(200, plan)
        with state.lock:
            if what == 'faults' and cmd == 'GET':
                return self.respond_json(200, state.faults)
            if what == 'log' and cmd == 'GET' and not rest:
                return self.respond_json(200, state.log)
            if what == 'log' and cmd == 'POST' and rest == 'clear':
                state.log.clear()
                return self.respond_json(200, [])
            if what in ('object', 'meta') and bucket and key:
                return self.control_object(what, unquote(bucket), unquote(key),
                                           body)
        self.respond_json(404, {'no such control call': cmd + ' ' + raw_path})

    def control_object(self, what, bucket, key, body):
        """The object calls of the control API (the caller holds the lock)."""
        buckets, cmd = self.state.buckets, self.command
        if what == 'object' and cmd == 'PUT':
            buckets.setdefault(bucket, {})[key] = Obj(body, self.headers.get(
                'Content-Type', 'binary/octet-stream'), meta_headers(self.headers))
            return self.respond_json(200, {'stored': len(body)})
        obj = buckets.get(bucket, {}).get(key)
        if obj is None:
            return self.respond_json(404, {'no such object': [bucket, key]})
        if what == 'object' and cmd == 'DELETE':
            del buckets[bucket][key]
            return self.respond_json(200, {'deleted': [bucket, key]})
        if what == 'object' and cmd == 'GET':
            return self.respond(200, obj.body, [('ETag', obj.etag)],
                                obj.content_type)
        if what == 'meta' and cmd == 'GET':
            return self.respond_json(200, obj.meta)
        self.respond_json(405, {'method not allowed': cmd})

    # ---- IMDSv2

    def imds(self, path):
        self.read_body()
        rec = {'method': self.command, 'path': path, 'imds': True,
               'time': time.time()}
        rec['status'] = self.imds_answer(path)
        self.state.record(rec)

    def imds_answer(self, path):
        """Answer one IMDS request; return the status sent."""
        args, tokens = self.state.args, self.state.imds_tokens
        if path == '/latest/api/token':
            if self.command != 'PUT':
                return self.text(405, 'Method Not Allowed')
            ttl = self.headers.get('X-aws-ec2-metadata-token-ttl-seconds', '')
            if not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
                return self.text(400, 'Bad Request')
            token = secrets.token_urlsafe(32)
            with self.state.lock:
                tokens[token] = time.time() + int(ttl)
            return self.text(200, token, [
                ('X-aws-ec2-metadata-token-ttl-seconds', ttl)])
        with self.state.lock:
            expiry = tokens.get(self.headers.get('X-aws-ec2-metadata-token', ''))
        if expiry is None or expiry < time.time():
            return self.text(401, 'Unauthorized')
        base = '/latest/meta-data/iam/security-credentials/'
        if self.command != 'GET' or not args.imds_role:
            return self.text(404, 'Not Found')
        if path == base:
            return self.text(200, args.imds_role)
        if path != base + args.imds_role:
            return self.text(404, 'Not Found')
        now = datetime.datetime.now(datetime.timezone.utc)
        iso = '%Y-%m-%dT%H:%M:%SZ'
        self.respond_json(200, {
            'Code': 'Success', 'LastUpdated': now.strftime(iso),
            'Type': 'AWS-HMAC', 'AccessKeyId': args.imds_access_key,
            'SecretAccessKey': args.imds_secret_key, 'Token': args.imds_token,
            'Expiration': (now + datetime.timedelta(
                seconds=args.imds_expiry_seconds)).strftime(iso)})
        return 200

    # ---- STS and container credentials: temporary credentials, issued here

    def issue(self, kind):
        """New temporary credentials, which S3 accepts until they expire."""
        state = self.state
        with state.lock:
            n = len(state.issued_expiry) + 1
            ak = 'ASIAFAKE%s%08d' % (kind.upper()[:4], n)
            cred = (ak, secrets.token_urlsafe(30), secrets.token_urlsafe(60))
            state.creds.append(cred)
            now = time.time()
            state.issued_expiry[ak] = now + (state.args.revoke_after or
                                             state.args.issue_seconds)
        when = datetime.datetime.fromtimestamp(now + state.args.issue_seconds,
                                               datetime.timezone.utc)
        return cred, when.strftime('%Y-%m-%dT%H:%M:%SZ')

    def sts(self, raw_query):
        body = self.read_body()
        form = dict(parse_qsl(body.decode('utf-8', 'replace')
                              if self.command == 'POST' else raw_query))
        action = form.get('Action', '')
        rec = {'method': self.command, 'path': '/_sts', 'creds': 'sts',
               'action': action, 'time': time.time(),
               'session_name': form.get('RoleSessionName'),
               'signed': 'Authorization' in self.headers}
        try:
            self.sts_check(action, form, body)
            cred, when = self.issue(action[len('AssumeRole'):] or 'role')
        except S3Error as e:
            rec['status'], rec['code'], rec['message'] = e.status, e.code, e.message
            self.state.record(rec)
            doc = ('<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code>'
                   '<Message>%s</Message></Error></ErrorResponse>'
                   % (e.code, escape(e.message)))
            return self.respond(e.status, doc.encode(), (), 'text/xml')
        rec['status'], rec['issued'] = 200, cred[0]
        self.state.record(rec)
        doc = ('<{a}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
               '<{a}Result><Credentials><AccessKeyId>{}</AccessKeyId>'
               '<SecretAccessKey>{}</SecretAccessKey><SessionToken>{}'
               '</SessionToken><Expiration>{}</Expiration></Credentials>'
               '</{a}Result></{a}Response>').format(*cred, when, a=action)
        self.respond(200, doc.encode(), (), 'text/xml')

    def sts_check(self, action, form, body):
        args = self.state.args
        if form.get('Version') != '2011-06-15':
            raise S3Error('InvalidRequest', 'Version 2011-06-15 expected')
        if args.role_arn and form.get('RoleArn') != args.role_arn:
            raise S3Error('AccessDenied', 'not the role %s' % args.role_arn)
        if not form.get('RoleSessionName'):
            raise S3Error('InvalidRequest', 'no RoleSessionName')
        if action == 'AssumeRoleWithWebIdentity':
            if not args.web_identity_token or not hmac.compare_digest(
                    form.get('WebIdentityToken', ''), args.web_identity_token):
                raise S3Error('AccessDenied', 'not the web identity token issued')
        elif action == 'AssumeRole':
            self.sts_signature(body)
        else:
            raise S3Error('NotImplemented', 'Action %r' % action)

    def sts_signature(self, body):
        """AssumeRole's SigV4 (service sts), checked by botocore over the credentials known."""
        h = self.headers
        scope, signed, signature = parse_authorization(h.get('Authorization'))
        cred = next((c for c in self.state.creds if c[0] == scope[0]), None)
        if cred is None:
            raise S3Error('InvalidAccessKeyId', scope[0])
        if scope[3] != 'sts' or scope[2] != self.state.args.region:
            raise S3Error('AuthorizationHeaderMalformed', '/'.join(scope))
        if (cred[2] is not None) != ('x-amz-security-token' in signed) or (
                cred[2] is not None and h.get('x-amz-security-token') != cred[2]):
            raise S3Error('InvalidToken', 'the source session token')
        url = 'http://%s%s' % (h['Host'], self.path)
        mine, canonical, _ = botocore_signature(
            cred, scope[2], self.command, url, body, signed, h,
            h.get('x-amz-date', ''), 'sts')
        if not hmac.compare_digest(mine, signature.lower()):
            raise S3Error('SignatureDoesNotMatch', 'canonical request (botocore): '
                          + canonical.replace('\n', ' | '))

    def container(self):
        """The ECS / EKS Pod Identity agent: JSON credentials for the Authorization token."""
        self.read_body()
        want = self.state.args.container_token
        got = self.headers.get('Authorization')
        rec = {'method': self.command, 'path': '/_container/creds',
               'creds': 'container', 'time': time.time()}
        if self.command != 'GET' or not want or got != want:
            rec['status'] = 401
            self.state.record(rec)
            return self.respond_json(401, {'Code': 'AccessDenied',
                                           'Message': 'not the token issued'})
        cred, when = self.issue('container')
        rec['status'], rec['issued'] = 200, cred[0]
        self.state.record(rec)
        self.respond_json(200, {'AccessKeyId': cred[0], 'SecretAccessKey': cred[1],
                                'Token': cred[2], 'Expiration': when})

    def text(self, status, text, headers=()):
        self.respond(status, text.encode(), headers, 'text/plain')
        return status


# ---------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(description='A fake S3 server for tests.')
    for name in ('--port-file', '--access-key', '--secret-key'):
        p.add_argument(name, required=True)
    for name in ('--log', '--session-token', '--imds-role', '--imds-access-key',
                 '--imds-secret-key', '--imds-token'):
        p.add_argument(name)
    for name in ('--web-identity-token', '--role-arn', '--container-token'):
        p.add_argument(name)
    p.add_argument('--issue-seconds', type=float, default=3600,
                   help='the lifetime of the credentials STS and the container issue')
    p.add_argument('--imds-expiry-seconds', type=float, default=21600,
                   help='the Expiration the instance role\'s credentials say')
    p.add_argument('--revoke-after', type=float,
                   help='issued credentials refused (ExpiredToken) after this many '
                   'seconds, whatever their Expiration says')
    p.add_argument('--region', default='us-east-1')
    p.add_argument('--bucket', action='append', default=[])
    p.add_argument('--page-size', type=int, default=1000,
                   help='the most keys a ListObjectsV2 page holds')
    p.add_argument('--max-skew-seconds', type=float, default=900)
    p.add_argument('--ignore-conditions', action='store_true',
                   help='ignore If-None-Match and If-Match, as s3rver does')
    p.add_argument('--verbose', action='store_true',
                   help='log each request to standard error')
    args = p.parse_args(argv)
    if bool(args.imds_access_key) != bool(args.imds_secret_key):
        p.error('--imds-access-key and --imds-secret-key go together')
    return args


def main(argv):
    args = parse_args(argv)
    PAGE_SIZE[0] = args.page_size
    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    server.daemon_threads = True  # a stalled request must not hold up exit
    server.state = State(args)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    # serve_forever() runs in a thread: shutdown() waits for it to return, so
    # it cannot be called from a signal handler interrupting it.
    threading.Thread(target=server.serve_forever, args=(0.1,),
                     daemon=True).start()
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write('%d\n' % server.server_address[1])
    os.rename(tmp, args.port_file)  # readers never see a half-written file
    stop.wait()  # the main thread still runs signal handlers while it waits
    server.shutdown()
    server.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
