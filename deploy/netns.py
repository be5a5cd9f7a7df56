"""Hosts on one machine for the multi-host rehearsal: Linux network namespaces joined by a switch.

    hosts = Hosts.create(["edge", "compute", "data", "bots"])   # needs root (CAP_NET_ADMIN)
    hosts.run_prefix("edge")      # ["ip", "netns", "exec", "atn-rh1234-edge"]: prepend to a command
    hosts.address("data")         # "10.77.12.4": the data host's one address
    hosts.partition("compute", "data"); ...; hosts.heal()
    hosts.close()                 # every namespace, link and process in them gone

The wiring: one more namespace, ``<prefix>-switch``, holds a bridge; each host gets one veth pair
whose one end (``eth0``, with the host's address) is in the host and whose other end is a port
of the bridge. The operator's end (the rehearsal process, which stays in the root namespace to
read Redis, PostgreSQL, the API and Prometheus) is one more veth pair, ``atn<pid>``, with the
subnet's ``.1``. The pairs are the only links: nothing is routed off the machine (no gateway, no
forwarding), and the subnet, ``10.77.<n>.0/24``, is one no route of the root namespace uses.

Faults are nftables rules in the switch's ``bridge`` family, matched on the hosts' addresses: a
partition or packet loss between two hosts is a silent drop of the frames between them, in both
directions, as a broken network would do (rules on a host itself would answer its own sends
with EPERM at once, which no real partition does). ``heal`` deletes the table.

Every name carries the rehearsal's pid (``atn-rh<pid>-...``), so two runs never collide, and a
run's leftovers (a rehearsal killed with kill -9 cannot clean up) are found and removed by the
next one (:func:`remove_stale`): its processes killed (``ip netns pids``), its namespaces deleted
(which deletes their veths, the operator's end included).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field

PREFIX = "atn-rh"  # every namespace this module makes is named atn-rh<pid>-<host>
SUBNETS = "10.77.{}.0/24"
NFT_TABLE = "atn_nemesis"


class NamespaceError(RuntimeError):
    """Namespaces cannot be made here (not root, no ``ip``/``nft``, a kernel without them)."""


def _run(*args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout,
                            stdin=subprocess.DEVNULL)
    if check and result.returncode != 0:
        raise NamespaceError(f"{' '.join(args)}: exit {result.returncode}: {result.stderr.strip()}")
    return result


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def namespaces() -> list[str]:
    result = _run("ip", "netns", "list", check=False)
    return [line.split()[0] for line in result.stdout.splitlines() if line.strip()]


def kill_namespace(name: str) -> None:
    """SIGKILL every process left in namespace ``name`` (a namespace with processes in it lives
    on after ``ip netns del``), then delete it."""
    for _ in range(20):
        pids = [int(p) for p in _run("ip", "netns", "pids", name, check=False).stdout.split()]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)  # a stopped process dies of SIGKILL too, but be sure
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    _run("ip", "netns", "del", name, check=False)


def remove_stale() -> list[str]:
    """Remove what a rehearsal that died without cleaning up left: namespaces ``atn-rh<pid>-*``
    whose pid is not running. Returns their names."""
    stale = []
    for name in namespaces():
        match = re.fullmatch(rf"{PREFIX}(\d+)-\w+", name)
        if match and not _pid_alive(int(match.group(1))):
            kill_namespace(name)
            stale.append(name)
    for link in json.loads(_run("ip", "-j", "link", "show", check=False).stdout or "[]"):
        match = re.fullmatch(r"atn(\d+)", link.get("ifname", ""))
        if match and not _pid_alive(int(match.group(1))):
            _run("ip", "link", "del", link["ifname"], check=False)
            stale.append(link["ifname"])
    return stale


def check_can_create() -> None:
    """Raise :class:`NamespaceError` saying why namespaces cannot be made here."""
    if os.geteuid() != 0:
        raise NamespaceError("network namespaces need root (ip netns add): run as root, as CI does")
    for tool, package in (("ip", "iproute2"), ("nft", "nftables"), ("setpriv", "util-linux")):
        if _run("sh", "-c", f"command -v {tool}", check=False).returncode != 0:
            raise NamespaceError(f"`{tool}` not installed: apt-get install -y {package} (./install.sh does)")


def _free_subnet() -> ipaddress.IPv4Network:
    """A 10.77.n.0/24 that no route of the root namespace (another run's, anything) uses."""
    used = [ipaddress.ip_network(route["dst"], strict=False)
            for route in json.loads(_run("ip", "-j", "route", "show").stdout or "[]")
            if route.get("dst", "default") != "default"]
    start = os.getpid() % 250
    for i in range(250):
        net = ipaddress.IPv4Network(SUBNETS.format((start + i) % 250 + 1))
        if not any(net.overlaps(u) for u in used):
            return net
    raise NamespaceError("no free 10.77.n.0/24 subnet left in the root namespace's routes")


@dataclass
class Hosts:
    """The namespaces of one run, their addresses, and the faults between them."""

    tag: str  # atn-rh<pid>
    subnet: ipaddress.IPv4Network
    addresses: dict[str, str] = field(default_factory=dict)  # host -> its address
    made: list[str] = field(default_factory=list)  # namespaces, in order of creation
    faults: list[str] = field(default_factory=list)  # what the switch drops now (for the log)

    @property
    def switch(self) -> str:
        return f"{self.tag}-switch"

    @property
    def operator_link(self) -> str:
        return self.tag.replace("-rh", "")  # atn<pid>: 15 bytes at most for a link's name

    @property
    def operator_address(self) -> str:
        return str(self.subnet.network_address + 1)

    def namespace(self, host: str) -> str:
        return f"{self.tag}-{host}"

    @classmethod
    def create(cls, hosts: list[str]) -> Hosts:
        """Make the switch, one namespace per host and the operator's link. On any failure,
        what was made is removed before the error is raised."""
        check_can_create()
        remove_stale()
        made = cls(tag=f"{PREFIX}{os.getpid()}", subnet=_free_subnet())
        try:
            made._build(hosts)
        except BaseException:
            made.close()
            raise
        return made

    def _build(self, hosts: list[str]) -> None:
        sw = self.switch
        _run("ip", "netns", "add", sw)
        self.made.append(sw)
        _run("ip", "-n", sw, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", sw, "link", "set", "dev", "br0", "up")
        _run("ip", "-n", sw, "link", "set", "dev", "lo", "up")
        for i, host in enumerate(hosts, start=2):
            ns = self.namespace(host)
            _run("ip", "netns", "add", ns)
            self.made.append(ns)
            port = f"p-{host}"[:15]
            _run("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", sw)
            _run("ip", "-n", sw, "link", "set", "dev", port, "master", "br0", "up")
            address = str(self.subnet.network_address + i)
            _run("ip", "-n", ns, "addr", "add", f"{address}/{self.subnet.prefixlen}", "dev", "eth0")
            _run("ip", "-n", ns, "link", "set", "dev", "eth0", "up")
            _run("ip", "-n", ns, "link", "set", "dev", "lo", "up")
            self.addresses[host] = address
        # the operator's link: its root end goes with the switch's namespace (a veth dies with its peer)
        link = self.operator_link
        _run("ip", "link", "add", link, "type", "veth", "peer", "name", "p-operator", "netns", sw)
        _run("ip", "-n", sw, "link", "set", "dev", "p-operator", "master", "br0", "up")
        _run("ip", "addr", "add", f"{self.operator_address}/{self.subnet.prefixlen}", "dev", link)
        _run("ip", "link", "set", "dev", link, "up")
        # the switch's table of faults: empty until the nemesis adds a rule
        self._nft(f"add table bridge {NFT_TABLE}")
        self._nft(f"add chain bridge {NFT_TABLE} forward {{ type filter hook forward priority 0; }}")

    def address(self, host: str) -> str:
        return self.addresses[host]

    def run_prefix(self, host: str) -> list[str]:
        """Prepended to a command line, runs it on ``host`` (``ip netns exec`` execs it: the
        process keeps its pid, so signals sent to it reach the command itself)."""
        return ["ip", "netns", "exec", self.namespace(host)]

    def _nft(self, command: str) -> None:
        _run("ip", "netns", "exec", self.switch, "nft", command)

    def _drop(self, a: str, b: str, percent: int | None) -> None:
        loss = f"numgen random mod 100 < {percent} " if percent is not None else ""
        for src, dst in ((a, b), (b, a)):
            self._nft(f"add rule bridge {NFT_TABLE} forward ip saddr {self.address(src)} "
                      f"ip daddr {self.address(dst)} {loss}drop")

    def partition(self, a: str, b: str) -> None:
        """No packet between hosts ``a`` and ``b`` (both ways) until :meth:`heal`."""
        self._drop(a, b, None)
        self.faults.append(f"partition {a} | {b}")

    def loss(self, a: str, b: str, percent: int) -> None:
        """``percent`` % of the packets between ``a`` and ``b`` (each way) dropped until :meth:`heal`."""
        self._drop(a, b, percent)
        self.faults.append(f"{percent}% loss {a} <-> {b}")

    def heal(self) -> None:
        """Every fault of the switch gone (its chain flushed)."""
        self._nft(f"flush chain bridge {NFT_TABLE} forward")
        self.faults.clear()

    def rules(self) -> str:
        return _run("ip", "netns", "exec", self.switch, "nft", "list", "table", "bridge", NFT_TABLE,
                    check=False).stdout

    def close(self) -> None:
        """Kill every process left in the hosts and delete the namespaces (and so every veth,
        the operator's end too). Safe to call twice."""
        for ns in reversed(self.made):
            kill_namespace(ns)
        self.made.clear()
        _run("ip", "link", "del", self.operator_link, check=False)
