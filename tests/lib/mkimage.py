#!/usr/bin/env python3
"""Build a container image tarball by hand, for tests/t_images.sh.

mkimage.py FORMAT OUT SPEC: FORMAT docker (docker save's manifest.json and
ID/layer.tar) or oci (an OCI image layout: oci-layout, index.json and
blobs/sha256/, layers gzipped), written as the tar OUT. SPEC is JSON:
{"images": [{"ref": "app:1", "platform": "linux/amd64",
             "layers": [{"usr/bin/a": "/path/of/file", "usr/bin/.wh.b": ""}]}]}
a layer maps paths to the file they hold ("": an empty file, a whiteout;
"->T": a symbolic link to T).
Identical layers are one blob, written once. Times are zero: the same spec
gives the same bytes.
"""
import gzip, hashlib, io, json, sys, tarfile


def tar_bytes(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name in sorted(entries):
            src = entries[name]
            if src.startswith("->"):  # a symbolic link
                info = tarfile.TarInfo(name)
                info.type, info.linkname, info.mtime = tarfile.SYMTYPE, src[2:], 0
                t.addfile(info)
                continue
            data = open(src, "rb").read() if src else b""
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o755, 0
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def sha(b):
    return hashlib.sha256(b).hexdigest()


class Out:
    def __init__(self, path):
        self.t = tarfile.open(path, "w", format=tarfile.USTAR_FORMAT)
        self.names = set()

    def add(self, name, data):
        if name in self.names:
            return  # a shared blob: once
        self.names.add(name)
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), 0o644, 0
        self.t.addfile(info, io.BytesIO(data))


    def link(self, name, target):
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.mtime = tarfile.SYMTYPE, target, 0
        self.t.addfile(info)


def docker(out, images):
    """A layer an image has twice is, as docker writes it, a symbolic link to the first."""
    o, manifest = Out(out), []
    for im in images:
        layers, diff_ids, first = [], [], {}
        for i, layer in enumerate(im["layers"]):
            raw = tar_bytes(layer)
            if raw in first:
                name = sha(raw + str(i).encode()) + "/layer.tar"
                o.link(name, "../" + first[raw])
            else:
                name = first[raw] = sha(raw) + "/layer.tar"
                o.add(name, raw)
            layers.append(name)
            diff_ids.append("sha256:" + sha(raw))
        osname, arch = im.get("platform", "linux/amd64").split("/")[:2]
        config = json.dumps({"os": osname, "architecture": arch,
                             "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
        o.add(sha(config) + ".json", config)
        entry = {"Config": sha(config) + ".json", "Layers": layers}
        if im.get("ref"):
            entry["RepoTags"] = [im["ref"]]
        manifest.append(entry)
    o.add("manifest.json", json.dumps(manifest).encode())
    o.t.close()


def blob(o, data):
    o.add("blobs/sha256/" + sha(data), data)
    return {"digest": "sha256:" + sha(data), "size": len(data)}


def oci(out, images):
    o, descs = Out(out), []
    o.add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    for im in images:
        layers, diff_ids = [], []
        for layer in im["layers"]:
            raw = tar_bytes(layer)
            gz = gzip.compress(raw, mtime=0)
            d = blob(o, gz)
            d["mediaType"] = "application/vnd.oci.image.layer.v1.tar+gzip"
            layers.append(d)
            diff_ids.append("sha256:" + sha(raw))
        osname, arch = im.get("platform", "linux/amd64").split("/")[:2]
        config = json.dumps({"os": osname, "architecture": arch,
                             "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
        c = blob(o, config)
        c["mediaType"] = "application/vnd.oci.image.config.v1+json"
        man = json.dumps({"schemaVersion": 2,
                          "mediaType": "application/vnd.oci.image.manifest.v1+json",
                          "config": c, "layers": layers}).encode()
        d = blob(o, man)
        d["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
        d["platform"] = {"os": osname, "architecture": arch}
        if im.get("ref"):
            d["annotations"] = {"org.opencontainers.image.ref.name": im["ref"]}
        descs.append(d)
    o.add("index.json", json.dumps({"schemaVersion": 2, "manifests": descs}).encode())
    o.t.close()


if __name__ == "__main__":
    fmt, out, spec = sys.argv[1:4]
    {"docker": docker, "oci": oci}[fmt](out, json.load(open(spec))["images"])
