#!/usr/bin/python3
"""Build build/guest/initramfs.cpio.gz (or build/$SROCE_GUEST's): busybox-static,
the guest's /init and the few kernel modules needed to reach the host's / over
virtio-9p.

Rebuilt only when an input changes (kernel ABI, busybox, init script, module
files): a digest of the inputs is stored next to the archive.
"""
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
GUEST = os.path.join(TOP, "build", os.environ.get("SROCE_GUEST") or "guest")
KDIR = os.path.join(GUEST, "kernel")
OUT = os.path.join(GUEST, "initramfs.cpio.gz")
INIT = os.path.join(TOP, "tools", "testing", "bench", "boot", "init")
BUSYBOX = "/bin/busybox"

# Needed before switch_root: the PCI transport, 9p over virtio, overlayfs.
# virtio_net/virtio_console/virtio_rng are loaded here too so stage2 starts
# with every device present (there is no udev to load them by alias).
ROOT_MODULES = ["virtio_pci", "virtio_rng", "virtio_net", "virtio_console",
                "9pnet_virtio", "9p", "overlay"]


def abi():
    with open(os.path.join(GUEST, "abi")) as f:
        return f.read().strip()


def module_order(kabi):
    """Module paths (relative to lib/modules/<abi>) in insmod order, deduplicated."""
    order = []
    for mod in ROOT_MODULES:
        out = subprocess.run(["modprobe", "-d", KDIR, "-S", kabi, "--show-depends", mod],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            words = line.split()
            if words[:1] == ["builtin"]:
                continue
            if words[:1] != ["insmod"]:
                raise SystemExit(f"mkinitramfs: unexpected modprobe output: {line}")
            rel = os.path.relpath(words[1], os.path.join(KDIR, "lib", "modules", kabi))
            if rel not in order:
                order.append(rel)
    return order


def digest(kabi, order):
    h = hashlib.sha256(kabi.encode())
    for path in [BUSYBOX, INIT, __file__] + \
            [os.path.join(KDIR, "lib", "modules", kabi, rel) for rel in order]:
        st = os.stat(path)
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def build(kabi, order):
    with tempfile.TemporaryDirectory(dir=GUEST) as root:
        for d in ("bin", "dev", "proc", "sys", "lower", "rw", "newroot", "lib/modules"):
            os.makedirs(os.path.join(root, d))
        shutil.copy2(BUSYBOX, os.path.join(root, "bin", "busybox"))
        os.symlink("busybox", os.path.join(root, "bin", "sh"))
        shutil.copy2(INIT, os.path.join(root, "init"))
        os.chmod(os.path.join(root, "init"), 0o755)
        mdir = os.path.join(root, "lib", "modules")
        names = []
        for i, rel in enumerate(order):
            # Flat, numbered names keep the load order obvious in the image.
            name = f"{i:02d}-{os.path.basename(rel)}"
            shutil.copy2(os.path.join(KDIR, "lib", "modules", kabi, rel), os.path.join(mdir, name))
            names.append(name)
        with open(os.path.join(mdir, "order"), "w") as f:
            f.write("\n".join(names) + "\n")
        files = subprocess.run(["find", "."], cwd=root, check=True,
                               capture_output=True).stdout
        cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"], cwd=root,
                              input=files, check=True, capture_output=True).stdout
    tmp = OUT + ".tmp"
    with gzip.open(tmp, "wb", compresslevel=6) as f:
        f.write(cpio)
    os.replace(tmp, OUT)


def main():
    kabi = abi()
    order = module_order(kabi)
    want = digest(kabi, order)
    stamp = OUT + ".digest"
    if os.path.exists(OUT) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == want:
                print(f"initramfs up to date: {os.path.relpath(OUT, TOP)}")
                return
    build(kabi, order)
    with open(stamp, "w") as f:
        f.write(want + "\n")
    print(f"initramfs built: {os.path.relpath(OUT, TOP)} ({len(order)} modules)")


if __name__ == "__main__":
    sys.exit(main())
