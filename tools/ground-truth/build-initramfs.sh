#!/bin/sh
# Builds the guest: downloads Debian's linux-image-6.1.0-56-amd64 (apt-get download, never
# installed), unpacks it, and makes an initramfs of static busybox, the modules, mke2fs
# (with its shared libraries), the two workload programs and ./init.
#   tools/ground-truth/build-initramfs.sh [WORKDIR]      (default /work/qemu)
# Needs: apt-get, dpkg-deb, gcc, busybox-static, e2fsprogs (mke2fs), gzip.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
W=${1:-/work/qemu}
KVER=6.1.0-56-amd64
mkdir -p "$W"
cd "$W"
if [ ! -f "$W/vmlinuz" ]; then
	ls linux-image-${KVER}_*.deb >/dev/null 2>&1 || apt-get download linux-image-$KVER
	rm -rf kpkg
	dpkg-deb -x linux-image-${KVER}_*.deb kpkg
	cp kpkg/boot/vmlinuz-$KVER "$W/vmlinuz"
fi
K=$W/kpkg/lib/modules/$KVER/kernel
R=$W/rootfs
rm -rf "$R"
mkdir -p "$R/bin" "$R/sbin" "$R/lib/modules" "$R/proc" "$R/sys" "$R/dev" "$R/tmp" "$R/mnt" "$R/etc"
cp /bin/busybox "$R/bin/busybox"   # busybox-static: a copy, not a symlink
if command -v file >/dev/null; then file "$R/bin/busybox" | grep -q 'statically linked' || { echo "busybox is not static (apt-get install busybox-static)"; exit 1; }; fi
for a in $("$R/bin/busybox" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$R/bin/$a"
done
for m in lib/crc16 crypto/crc32c_generic lib/libcrc32c fs/mbcache fs/jbd2/jbd2 fs/ext4/ext4 drivers/block/brd; do
	f=$K/$m.ko
	[ -f "$f" ] || f=$K/$m.ko.xz
	cp "$f" "$R/lib/modules/"
done
gcc -static -O2 -pthread -Wall -o "$R/bin/anon" "$HERE/anon.c"
gcc -static -O2 -pthread -Wall -o "$R/bin/fileread" "$HERE/fileread.c"
# mke2fs is dynamic: take it with its libraries and loader.
MKE2FS=$(command -v mke2fs || echo /sbin/mke2fs)
rm -f "$R/bin/mke2fs"
cp "$MKE2FS" "$R/sbin/mke2fs"
for lib in $(ldd "$MKE2FS" | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
	mkdir -p "$R$(dirname "$lib")"
	cp -L "$lib" "$R$lib"
done
[ -e "$R/lib64" ] || ln -s lib "$R/lib64" 2>/dev/null || true
cp "$HERE/init" "$R/init"
chmod +x "$R/init"
(cd "$R" && find . | "$R/bin/busybox" cpio -o -H newc 2>/dev/null | gzip -9) > "$W/initramfs.cpio.gz"
ls -la "$W/vmlinuz" "$W/initramfs.cpio.gz"
