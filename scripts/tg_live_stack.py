#!/usr/bin/env python3
"""TrustGraph 2.11.1's own services on 127.0.0.1, for live tests.

    PY=$(scripts/setup-tg-live.sh)
    "$PY" scripts/tg_live_stack.py --llm-url http://127.0.0.1:PORT/v1 \
        [--model M] [--workdir DIR] [--max-output N] [--variant V]

Starts, each on a free loopback port and with its log in the workdir:

  - RabbitMQ (Debian's rabbitmq-server, /usr/lib/rabbitmq/bin/rabbitmq-server
    run as the current user: private node name, mnesia, logs, config,
    Erlang cookie (HOME) and epmd port, every listener on 127.0.0.1);
  - TrustGraph's config service (config-svc), no-auth IAM (no-auth-svc),
    API gateway (api-gateway), prompt service (prompt-template) and OpenAI
    text-completion service (text-completion-openai, pointed at --llm-url),
    all on PUBSUB_BACKEND=rabbitmq.

Then prints ONE JSON line on stdout:

    {"url": "http://127.0.0.1:PORT/", "flow": "default", "workspace":
     "default", "logs": {service: path}, "pid": PID, ...}

and stays up until stdin is closed (unless --ignore-stdin) or SIGTERM /
SIGINT arrives; then stops every child (each in its own process group),
stops RabbitMQ, runs `epmd -kill` on the private epmd, and exits 0. Every
child also gets PR_SET_PDEATHSIG, so a stack killed outright leaves no
service behind. A failed start prints the service, what was awaited and
the tail of its log on stderr, stops what it started and exits 1.

What differs from a TrustGraph deployment, and nothing else:

  1. The config service stores to Cassandra only (trustgraph/tables/
     config.py's ConfigTableStore). It runs here in a Python child process
     of this script (`_config-svc` mode) whose `trustgraph.tables.config`
     module is replaced, before TrustGraph's config service is imported,
     by one holding an in-memory ConfigTableStore with the same methods
     and return shapes (rows in Cassandra's clustering order: by key
     within a (workspace, type) partition). This is the only deviation
     from TrustGraph's code; the config service itself is TrustGraph's,
     started through its own `run()`.
  2. The API gateway has no flag or variable for its listen address
     (trustgraph/gateway/service.py calls aiohttp's web.run_app with a
     port only, so it binds every interface). The `_gateway` mode passes
     host="127.0.0.1" to aiohttp's run_app and then calls TrustGraph's own
     `run()`; TrustGraph's code is not changed.
  3. The store starts with the items `no-auth-svc`'s create-workspace and
     flow-svc's start-flow would have written (the workspace registration,
     a flow blueprint, the flow and the two processors' flow config), so
     the stack needs neither flow-svc nor a bootstrapper. See FLOW_* below.

The gateway's start takes about a minute by TrustGraph's design: it asks
IAM for a JWT signing key 30 times, 2 s apart, and the no-auth IAM has none
(it answers ""), so it always uses every attempt (gateway/auth.py
IamAuth.start). IAM is started first so that no attempt waits for its
10 s IAM timeout instead.
"""

import argparse
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

TG_VERSION = "2.11.1"
RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
FLOW_BLUEPRINT = "cutline-live"


# --------------------------------------------------------------------------
# The flow: what `tg-put-flow-blueprint` + `tg-start-flow` would leave in
# the config store (trustgraph/flow/service/flow.py handle_start_flow), for
# a blueprint with one prompt processor and one text-completion processor.
# --------------------------------------------------------------------------

def flow_blueprint():
    """The blueprint, with TrustGraph's template variables unresolved."""
    prompt_q = "tg:prompt:{workspace}:{id}"
    tc_q = "tg:text-completion:{workspace}:{id}"
    return {
        "description": "cutline live tests: prompt -> text-completion",
        "tags": ["cutline"],
        "blueprint": {},
        "flow": {
            "prompt:{id}": {
                "topics": {
                    "request": "request:" + prompt_q,
                    "response": "response:" + prompt_q,
                    "text-completion-request": "request:" + tc_q,
                    "text-completion-response": "response:" + tc_q,
                },
            },
            "text-completion:{id}": {
                "topics": {
                    "request": "request:" + tc_q,
                    "response": "response:" + tc_q,
                },
            },
        },
        "interfaces": {
            "prompt": {
                "request": "request:" + prompt_q,
                "response": "response:" + prompt_q,
            },
            "text-completion": {
                "request": "request:" + tc_q,
                "response": "response:" + tc_q,
            },
        },
    }


def seed_items(workspace, flow):
    """(workspace, type, key, value) rows the config store starts with."""

    def resolve(s):
        return s.replace("{workspace}", workspace).replace(
            "{blueprint}", FLOW_BLUEPRINT).replace("{id}", flow)

    bp = flow_blueprint()
    items = [
        # no-auth-svc's create-workspace (iam/noauth/service.py,
        # _ensure_workspace_registered)
        ("__workspaces__", "workspace", workspace, '{"enabled": true}'),
        (workspace, "flow-blueprint", FLOW_BLUEPRINT, json.dumps(bp)),
    ]
    # flow-svc's start-flow: one processor:<name> item per processor,
    # keyed by the resolved variant, then the flow item.
    for kind in ("blueprint", "flow"):
        for k, v in bp[kind].items():
            processor, variant = k.split(":", 1)
            entry = {
                "topics": {resolve(a): resolve(b)
                           for a, b in v.get("topics", {}).items()},
                "parameters": {resolve(a): resolve(b)
                               for a, b in v.get("parameters", {}).items()},
            }
            items.append((workspace, f"processor:{processor}",
                          resolve(variant), json.dumps(entry)))
    interfaces = {k: {a: resolve(b) for a, b in v.items()}
                  for k, v in bp["interfaces"].items()}
    items.append((workspace, "flow", flow, json.dumps({
        "description": "cutline live",
        "blueprint-name": FLOW_BLUEPRINT,
        "interfaces": interfaces,
        "parameters": {},
    })))
    return items


# --------------------------------------------------------------------------
# Child modes
# --------------------------------------------------------------------------

def run_config_service(seed_path, tg_args):
    """TrustGraph's config service with an in-memory table store."""
    import types

    class InMemoryConfigTableStore:
        """Same methods and return shapes as trustgraph.tables.config.
        ConfigTableStore (2.11.1), in memory. Cassandra's schema is
        PRIMARY KEY ((workspace, class), key): rows of one partition come
        back ordered by key, so every read here is sorted."""

        def __init__(self, cassandra_host=None, cassandra_username=None,
                     cassandra_password=None, keyspace=None,
                     replication_factor=1):
            self.keyspace = keyspace
            self.replication_factor = replication_factor
            self.rows = {}          # (workspace, cls, key) -> value
            self.version = 0        # the counter starts at 0

        async def inc_version(self):
            self.version += 1

        async def get_version(self):
            return self.version

        async def put_config(self, workspace, cls, key, value):
            self.rows[(workspace, cls, key)] = value

        async def get_value(self, workspace, cls, key):
            return self.rows.get((workspace, cls, key))

        def _sorted(self):
            return sorted(self.rows.items())

        async def get_values(self, workspace, cls):
            return [[k[2], v] for k, v in self._sorted()
                    if k[0] == workspace and k[1] == cls]

        async def get_values_all_ws(self, cls):
            return [(k[0], k[2], v) for k, v in self._sorted() if k[1] == cls]

        async def get_keys_all_ws(self, cls):
            return [(k[0], k[2]) for k, v in self._sorted() if k[1] == cls]

        async def get_all(self):
            return [(k[0], k[1], k[2], v) for k, v in self._sorted()]

        async def get_all_for_workspace(self, workspace):
            return [(k[1], k[2], v) for k, v in self._sorted()
                    if k[0] == workspace]

        async def get_keys(self, workspace, cls):
            return [k[2] for k, v in self._sorted()
                    if k[0] == workspace and k[1] == cls]

        async def delete_key(self, workspace, cls, key):
            self.rows.pop((workspace, cls, key), None)

    seed = []
    if seed_path:
        with open(seed_path) as f:
            seed = json.load(f)

    class SeededStore(InMemoryConfigTableStore):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            for ws, cls, key, value in seed:
                self.rows[(ws, cls, key)] = value

    # The one deviation from TrustGraph's code: its Cassandra table store
    # module is replaced before the config service imports it.
    mod = types.ModuleType("trustgraph.tables.config")
    mod.ConfigTableStore = SeededStore
    sys.modules["trustgraph.tables.config"] = mod

    from trustgraph.config.service import service as config_service
    sys.argv = ["config-svc"] + tg_args
    config_service.run()


def run_gateway(host, tg_args):
    """TrustGraph's API gateway, listening on `host` only."""
    import aiohttp.web

    original = aiohttp.web.run_app

    def run_app(app, *args, **kwargs):
        kwargs.setdefault("host", host)
        return original(app, *args, **kwargs)

    aiohttp.web.run_app = run_app
    from trustgraph.gateway import service as gateway_service
    sys.argv = ["api-gateway"] + tg_args
    gateway_service.run()


# --------------------------------------------------------------------------
# Process management
# --------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1


def _pdeathsig():
    """In the child, before exec: SIGTERM when this stack process dies."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except Exception:
        pass


def free_port(taken):
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in taken:
            taken.add(port)
            return port


def tail(path, lines=40):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 16384))
            data = f.read().decode("utf-8", "replace")
        return "\n".join(data.splitlines()[-lines:])
    except OSError as e:
        return f"(no log: {e})"


class StartError(Exception):
    pass


class Child:
    def __init__(self, name, argv, log, env, cwd):
        self.name = name
        self.log = log
        self.logf = open(log, "ab", buffering=0)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=self.logf,
            stderr=subprocess.STDOUT, env=env, cwd=cwd,
            start_new_session=True, preexec_fn=_pdeathsig,
        )

    def alive(self):
        return self.proc.poll() is None

    def signal_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def group_alive(self):
        try:
            os.killpg(self.proc.pid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    def stop(self, grace):
        """SIGTERM to the process group, SIGKILL after `grace` seconds."""
        if self.group_alive():
            self.signal_group(signal.SIGTERM)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                self.proc.poll()
                if not self.group_alive():
                    break
                time.sleep(0.1)
            else:
                self.signal_group(signal.SIGKILL)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.logf.close()


class Stack:
    def __init__(self, args):
        self.args = args
        self.children = []
        self.epmd = None
        self.epmd_port = None
        self.rabbit = None
        self.rabbit_env = None
        self.logs = {}
        self.t0 = time.monotonic()
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}))
        if args.workdir:
            self.workdir = os.path.abspath(args.workdir)
            os.makedirs(self.workdir, exist_ok=True)
            self.own_workdir = False
        else:
            self.workdir = tempfile.mkdtemp(prefix="tg-live-")
            self.own_workdir = True
        self.logdir = os.path.join(self.workdir, "logs")
        os.makedirs(self.logdir, exist_ok=True)
        self.bindir = os.path.dirname(os.path.abspath(sys.executable))

    # -- helpers ---------------------------------------------------------

    def elapsed(self):
        return time.monotonic() - self.t0

    def say(self, msg):
        if not self.args.quiet:
            print(f"tg-live [{self.elapsed():5.1f}s] {msg}",
                  file=sys.stderr, flush=True)

    def spawn(self, name, argv, env):
        log = os.path.join(self.logdir, f"{name}.log")
        self.logs[name] = log
        child = Child(name, argv, log, env, self.workdir)
        self.children.append(child)
        return child

    def wait_for(self, child, what, check, timeout):
        """Poll `check()` until true; fail naming the service if `child`
        dies or the timeout passes."""
        deadline = time.monotonic() + timeout
        while True:
            if check():
                return
            if child is not None and not child.alive():
                raise StartError(
                    f"{child.name} exited (status {child.proc.returncode}) "
                    f"while waiting for {what}; last lines of {child.log}:\n"
                    f"{tail(child.log)}")
            if time.monotonic() > deadline:
                name = child.name if child else "stack"
                log = child.log if child else ""
                raise StartError(
                    f"{name}: no {what} after {timeout:.0f} s; last lines "
                    f"of {log}:\n{tail(log) if log else ''}")
            time.sleep(0.2)

    def log_has(self, child, text):
        def check():
            try:
                with open(child.log, "rb") as f:
                    return text.encode() in f.read()
            except OSError:
                return False
        return check

    def tg_env(self):
        env = dict(os.environ)
        for k in list(env):
            if k.startswith(("PULSAR_", "KAFKA_", "RABBITMQ_", "CASSANDRA_",
                             "LOKI_", "OPENAI_")):
                del env[k]
        env.update({
            "PUBSUB_BACKEND": "rabbitmq",
            "RABBITMQ_HOST": "127.0.0.1",
            "RABBITMQ_PORT": str(self.amqp_port),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
        })
        return env

    def tg_common(self):
        return [
            "--pubsub-backend", "rabbitmq",
            "--rabbitmq-host", "127.0.0.1",
            "--rabbitmq-port", str(self.amqp_port),
            "--no-loki-enabled",
            "--log-level", self.args.log_level,
        ]

    # -- RabbitMQ --------------------------------------------------------

    def start_rabbitmq(self, taken):
        if not os.access(RABBITMQ_SERVER, os.X_OK):
            raise StartError(
                f"rabbitmq: {RABBITMQ_SERVER} not found; run "
                f"scripts/setup-tg-live.sh (apt package rabbitmq-server)")
        epmd = shutil.which("epmd") or "/usr/bin/epmd"
        if not os.access(epmd, os.X_OK):
            raise StartError("rabbitmq: epmd (erlang-base) not found")
        self.epmd_bin = epmd
        base = os.path.join(self.workdir, "rabbitmq")
        home = os.path.join(base, "home")
        for d in (base, home, os.path.join(base, "mnesia"),
                  os.path.join(base, "log")):
            os.makedirs(d, exist_ok=True)
        self.amqp_port = free_port(taken)
        dist_port = free_port(taken)
        self.epmd_port = free_port(taken)
        conf = os.path.join(base, "rabbitmq.conf")
        with open(conf, "w") as f:
            f.write(
                f"listeners.tcp.1 = 127.0.0.1:{self.amqp_port}\n"
                "listeners.ssl = none\n"
                "loopback_users.guest = true\n"
                "log.file.level = info\n"
                "log.console = false\n")
        with open(os.path.join(base, "enabled_plugins"), "w") as f:
            f.write("[].\n")
        open(os.path.join(base, "rabbitmq-env.conf"), "w").close()
        node = f"tglive{os.getpid()}x{self.amqp_port}@localhost"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("RABBITMQ_", "ERL_"))}
        env.update({
            # The Erlang cookie is written to $HOME/.erlang.cookie.
            "HOME": home,
            "RABBITMQ_NODENAME": node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.amqp_port),
            "RABBITMQ_DIST_PORT": str(dist_port),
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS":
                "-kernel inet_dist_use_interface {127,0,0,1}",
            "RABBITMQ_MNESIA_BASE": os.path.join(base, "mnesia"),
            "RABBITMQ_LOG_BASE": os.path.join(base, "log"),
            "RABBITMQ_CONFIG_FILE": conf,
            "RABBITMQ_ADVANCED_CONFIG_FILE":
                os.path.join(base, "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE":
                os.path.join(base, "enabled_plugins"),
            "RABBITMQ_CONF_ENV_FILE": os.path.join(base, "rabbitmq-env.conf"),
            "RABBITMQ_PID_FILE": os.path.join(base, "rabbitmq.pid"),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
            "ERL_EPMD_PORT": str(self.epmd_port),
            "ERL_CRASH_DUMP": os.path.join(base, "erl_crash.dump"),
        })
        self.rabbit_env = env
        # Our own epmd, in the foreground, so that it is our child (and
        # dies with us); rabbitmq-server finds it on ERL_EPMD_PORT.
        self.epmd = self.spawn(
            "epmd", [epmd, "-address", "127.0.0.1",
                     "-port", str(self.epmd_port)], env)
        self.wait_for(self.epmd, f"epmd on 127.0.0.1:{self.epmd_port}",
                      lambda: port_open(self.epmd_port), 15)
        self.rabbit = self.spawn("rabbitmq", [RABBITMQ_SERVER], env)
        # The broker's own log (its stdout goes to logs/rabbitmq.log).
        self.logs["rabbitmq-node"] = os.path.join(base, "log", f"{node}.log")
        self.wait_for(self.rabbit, f"AMQP listener on 127.0.0.1:"
                      f"{self.amqp_port}",
                      lambda: port_open(self.amqp_port),
                      self.args.rabbitmq_timeout)
        self.say(f"rabbitmq ready on 127.0.0.1:{self.amqp_port}")

    # -- TrustGraph ------------------------------------------------------

    def start(self):
        taken = set()
        self.start_rabbitmq(taken)
        self.gateway_port = free_port(taken)
        env = self.tg_env()
        me = os.path.abspath(__file__)
        py = sys.executable
        ws, flow = self.args.workspace, self.args.flow

        seed = os.path.join(self.workdir, "config-seed.json")
        with open(seed, "w") as f:
            json.dump(seed_items(ws, flow), f, indent=1)

        common = self.tg_common()
        config = self.spawn("config-svc", [
            py, me, "_config-svc", "--seed", seed, "--",
            *common, "--no-metrics"], env)
        iam = self.spawn("no-auth-svc", [
            os.path.join(self.bindir, "no-auth-svc"), *common,
            "--no-metrics", "--default-workspace", ws], env)
        tc_args = [
            os.path.join(self.bindir, "text-completion-openai"), *common,
            "--no-metrics", "-u", self.args.llm_url,
            "-k", self.args.api_key,
            "--variant", self.args.variant,
            "-x", str(self.args.max_output),
            "-t", str(self.args.temperature)]
        if self.args.model:
            tc_args += ["-m", self.args.model]
        tc = self.spawn("text-completion", tc_args, env)
        prompt = self.spawn("prompt", [
            os.path.join(self.bindir, "prompt-template"), *common,
            "--no-metrics"], env)

        # IAM answers before the gateway's first signing-key request, so
        # none of its 30 attempts waits for the 10 s IAM timeout.
        self.wait_for(iam, "IAM request consumer",
                      self.log_has(iam, "Added consumer: request:tg:iam"),
                      self.args.service_timeout)
        gateway = self.spawn("api-gateway", [
            py, me, "_gateway", "--host", "127.0.0.1", "--",
            *common, "--no-metrics", "--port", str(self.gateway_port),
            "--timeout", str(self.args.request_timeout)], env)

        self.wait_for(config, "subscription to the workspace config queue",
                      self.log_has(config, "Subscribed to workspace config "
                                           f"queue: {ws}"),
                      self.args.service_timeout)
        queue_tc = f"request:tg:text-completion:{ws}:{flow}"
        queue_prompt = f"request:tg:prompt:{ws}:{flow}"
        self.wait_for(tc, f"consumer on {queue_tc}",
                      self.log_has(tc, f"Added consumer: {queue_tc}"),
                      self.args.service_timeout)
        self.wait_for(prompt, f"consumer on {queue_prompt}",
                      self.log_has(prompt, f"Added consumer: {queue_prompt}"),
                      self.args.service_timeout)
        self.say("config, IAM, prompt and text-completion services up; "
                 "the gateway waits ~60 s for IAM's (absent) signing key")

        self.url = f"http://127.0.0.1:{self.gateway_port}/"
        self.wait_for(gateway, "answer to a config list",
                      self.config_list_ok, self.args.gateway_timeout)
        self.wait_for(prompt, "answer through the gateway",
                      self.prompt_probe_ok, self.args.service_timeout)
        self.say(f"ready: {self.url}")

    def post(self, path, body, timeout):
        req = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"}, method="POST")
        with self.opener.open(req, timeout=timeout) as r:
            return r.status, json.loads(r.read().decode())

    def config_list_ok(self):
        try:
            status, body = self.post(
                "api/v1/config", {"operation": "list", "type": "prompt",
                                  "workspace": self.args.workspace}, 3)
            return status == 200 and "directory" in body
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def prompt_probe_ok(self):
        # An id no prompt has: the prompt service answers at once with an
        # error (HTTP 200, {"end_of_stream": true}), never calling the LLM.
        try:
            status, body = self.post(
                f"api/v1/flow/{self.args.flow}/service/prompt",
                {"id": "__tg_live_probe__", "variables": {}}, 3)
            return status == 200 and body.get("end_of_stream") is True
        except (urllib.error.URLError, OSError, ValueError):
            return False

    # -- shutdown --------------------------------------------------------

    def stop(self):
        services = [c for c in self.children
                    if c not in (self.rabbit, self.epmd)]
        for c in services:
            if c.group_alive():
                c.signal_group(signal.SIGTERM)
        for c in services:
            c.stop(5)
        if self.rabbit is not None:
            self.rabbit.stop(30)
        if self.epmd is not None:
            try:
                subprocess.run(
                    [self.epmd_bin, "-port", str(self.epmd_port), "-kill"],
                    env=self.rabbit_env, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.epmd.stop(5)
    def cleanup(self, failed):
        if self.own_workdir and not self.args.keep:
            if failed:
                print(f"tg_live_stack: logs kept in {self.workdir}",
                      file=sys.stderr, flush=True)
            else:
                shutil.rmtree(self.workdir, ignore_errors=True)


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Stop(Exception):
    pass


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "_config-svc":
        p = argparse.ArgumentParser(prog="tg_live_stack.py _config-svc")
        p.add_argument("--seed")
        p.add_argument("tg_args", nargs=argparse.REMAINDER)
        a = p.parse_args(sys.argv[2:])
        rest = a.tg_args[1:] if a.tg_args[:1] == ["--"] else a.tg_args
        return run_config_service(a.seed, rest)
    if len(sys.argv) > 1 and sys.argv[1] == "_gateway":
        p = argparse.ArgumentParser(prog="tg_live_stack.py _gateway")
        p.add_argument("--host", default="127.0.0.1")
        p.add_argument("tg_args", nargs=argparse.REMAINDER)
        a = p.parse_args(sys.argv[2:])
        rest = a.tg_args[1:] if a.tg_args[:1] == ["--"] else a.tg_args
        return run_gateway(a.host, rest)

    p = argparse.ArgumentParser(
        description="Run TrustGraph 2.11.1's config, IAM (no-auth), "
                    "gateway, prompt and OpenAI text-completion services "
                    "on RabbitMQ, on 127.0.0.1.")
    p.add_argument("--llm-url", required=True,
                   help="OpenAI-compatible base URL, e.g. "
                        "http://127.0.0.1:8080/v1")
    p.add_argument("--model", help="model name sent to the LLM "
                   "(default: TrustGraph's, gpt-3.5-turbo)")
    p.add_argument("--api-key", default="tg-live",
                   help="API key sent to the LLM (default: tg-live)")
    p.add_argument("--variant", default="openai",
                   help="text-completion-openai --variant (default: openai, "
                        "TrustGraph's default: the limit goes out as "
                        "max_completion_tokens; llama/vllm/mistral/glm send "
                        "max_tokens)")
    p.add_argument("--max-output", type=int, default=4096,
                   help="text-completion-openai --max-output: the token "
                        "limit of every LLM call (default: 4096, "
                        "TrustGraph's)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--workdir", help="logs, RabbitMQ's data and the seed go "
                   "here (default: a new temporary directory, removed at "
                   "exit unless --keep)")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary workdir")
    p.add_argument("--flow", default="default")
    p.add_argument("--workspace", default="default")
    p.add_argument("--request-timeout", type=int, default=600,
                   help="api-gateway --timeout (default: 600, TrustGraph's)")
    p.add_argument("--log-level", default="INFO",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument("--rabbitmq-timeout", type=float, default=60)
    p.add_argument("--service-timeout", type=float, default=60)
    p.add_argument("--gateway-timeout", type=float, default=120,
                   help="seconds to wait for the gateway (it needs ~60)")
    p.add_argument("--ignore-stdin", action="store_true",
                   help="stay up until SIGTERM/SIGINT only")
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines on stderr")
    args = p.parse_args()

    def on_signal(signum, frame):
        raise Stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    stack = Stack(args)
    status = 0
    try:
        try:
            stack.start()
        except StartError as e:
            print(f"tg_live_stack: {e}", file=sys.stderr, flush=True)
            status = 1
        else:
            print(json.dumps({
                "url": stack.url,
                "flow": args.flow,
                "workspace": args.workspace,
                "logs": stack.logs,
                "pid": os.getpid(),
                "workdir": stack.workdir,
                "amqp_port": stack.amqp_port,
                "trustgraph": TG_VERSION,
                "startup_seconds": round(stack.elapsed(), 1),
            }), flush=True)
            if args.ignore_stdin:
                while True:
                    time.sleep(3600)
            fd = sys.stdin.fileno()
            while True:
                r, _, _ = select.select([fd], [], [], 1.0)
                if r and not os.read(fd, 65536):
                    break   # stdin closed
    except Stop:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stack.stop()
        stack.cleanup(failed=status != 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
