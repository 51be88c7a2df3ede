"""A Mininet switch that runs nevermiss in BMv2's place (docs/drop-in.md).

    from nevermiss_mininet import NevermissSwitch
    net = Mininet(topo, switch=NevermissSwitch, controller=None, link=TCLink)

Each switch is one `nevermiss serve` process in the root namespace: its Mininet interfaces are
its ports (port number = Mininet's port number), sent through the interface's qdisc so that
TCLink shaping limits and backs up what it sends; every port has an egress queue (BMv2's 64
packets deep), so v1model's enq_qdepth/deq_qdepth are real; a P4Runtime server listens on
127.0.0.1:grpc_port (from 50051 up, as the tutorials' P4RuntimeSwitch numbers them) with device
id device_id (from 0 up). `program` (P4_16 source or BMv2 JSON) is loaded at start; without it
the switch waits for a controller's SetForwardingPipelineConfig.

Options: exe (the nevermiss executable; default $NEVERMISS or `nevermiss` on PATH),
grpc_port, device_id, cpu_port, log_file (default /tmp/nevermiss-NAME.log), log_console,
pcap_dir, priority_queues, extra_args (more `nevermiss serve` flags).
"""

import os
import signal
import socket
import subprocess
import time

from mininet.log import debug, info
from mininet.node import Switch

START_TIMEOUT = 30.0


class NevermissSwitch(Switch):
    """A P4 switch: nevermiss serving P4Runtime over the node's interfaces."""

    next_grpc_port = 50051
    next_device_id = 0

    def __init__(self, name, program=None, exe=None, grpc_port=None, device_id=None,
                 cpu_port=None, log_file=None, log_console=False, pcap_dir=None,
                 priority_queues=None, extra_args=(), **params):
        Switch.__init__(self, name, **params)
        self.program = program
        self.exe = exe or os.environ.get("NEVERMISS", "nevermiss")
        if grpc_port is None:
            grpc_port = NevermissSwitch.next_grpc_port
            NevermissSwitch.next_grpc_port += 1
        if device_id is None:
            device_id = NevermissSwitch.next_device_id
            NevermissSwitch.next_device_id += 1
        self.grpc_port = grpc_port
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.log_file = log_file or "/tmp/nevermiss-%s.log" % name
        self.log_console = log_console
        self.pcap_dir = pcap_dir
        self.priority_queues = priority_queues
        self.extra_args = list(extra_args)
        self.proc = None

    @classmethod
    def setup(cls):
        pass

    def command(self):
        """The `nevermiss serve` command line this switch runs."""
        args = [self.exe, "serve"]
        if self.program:
            args.append(self.program)
        for port, intf in sorted(self.intfs.items()):
            if intf.name == "lo" or intf.IP():
                continue
            args += ["--port", "%d=if:%s,qdisc" % (port, intf.name)]
        args += ["--grpc-addr", "127.0.0.1:%d" % self.grpc_port,
                 "--device-id", str(self.device_id), "--egress-queues", "all"]
        if self.cpu_port is not None:
            args += ["--cpu-port", str(self.cpu_port)]
        if self.priority_queues:
            args += ["--priority-queues", str(self.priority_queues)]
        if self.log_console:
            args.append("--log-console")
        if self.pcap_dir:
            args += ["--pcap-dir", self.pcap_dir]
        return args + self.extra_args

    def listening(self):
        with socket.socket() as s:
            s.settimeout(0.2)
            return s.connect_ex(("127.0.0.1", self.grpc_port)) == 0

    def start(self, controllers):
        """Starts nevermiss and waits until its P4Runtime server answers; raises if it
        exits first (its log says why)."""
        args = self.command()
        info("*** %s: %s\n" % (self.name, " ".join(args)))
        log = open(self.log_file, "w")
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.listening():
            if self.proc.poll() is not None:
                with open(self.log_file) as f:
                    raise RuntimeError("%s: nevermiss exited (%d): %s"
                                       % (self.name, self.proc.returncode, f.read()[-2000:]))
            if time.monotonic() > deadline:
                self.stop_switch()
                raise RuntimeError("%s: no P4Runtime server on port %d after %.0f s"
                                   % (self.name, self.grpc_port, START_TIMEOUT))
            time.sleep(0.1)
        debug("%s: nevermiss pid %d\n" % (self.name, self.proc.pid))

    def stop_switch(self):
        """Stops nevermiss (SIGTERM, then SIGKILL after 5 s)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def stop(self, deleteIntfs=True):
        self.stop_switch()
        Switch.stop(self, deleteIntfs)
