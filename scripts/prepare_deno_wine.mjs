#!/usr/bin/env node
// Used by scripts/wine_test.sh (see tests/README.md, "The Windows lane").
// Make the Windows deno.exe run under Debian 12's Wine 8.0. Two gaps in Wine 8.0:
//  1. no bcryptprimitives.dll (Rust >= 1.78 std imports ProcessPrng from it):
//     write a 1 KiB code-free DLL whose only export, ProcessPrng, forwards to
//     advapi32.SystemFunction036 (RtlGenRandom). Rust std/getrandom ignore the
//     return value (ProcessPrng is documented to always return TRUE).
//  2. VirtualAlloc2 exists but rejects MEM_RESERVE_PLACEHOLDER, so V8 dies with
//     "Fatal process out of memory: SegmentedTable::InitializeTable (subspace
//     allocation)". Rename the single "VirtualAlloc2" string V8 hands to
//     GetProcAddress, so V8 takes its own fallback for Windows without
//     VirtualAlloc2 (an emulated subspace on a plain VirtualAlloc reservation).
// usage: node prepare-deno-wine.mjs IN/deno.exe OUT/deno.exe OUT/bcryptprimitives.dll
import { readFileSync, writeFileSync } from "node:fs";

const [src, dstExe, dstDll] = process.argv.slice(2);
if (!src || !dstExe || !dstDll) {
  console.error(
    "usage: prepare-deno-wine.mjs IN.exe OUT.exe OUT_bcryptprimitives.dll",
  );
  process.exit(2);
}

// ---- 1. patch deno.exe ----
const exe = readFileSync(src);
const needle = Buffer.from("\0VirtualAlloc2\0", "latin1");
const at = exe.indexOf(needle);
if (at < 0 || exe.indexOf(needle, at + 1) >= 0) {
  console.error(`expected exactly one "VirtualAlloc2" string in ${src}`);
  process.exit(1);
}
exe.write("VirtualAllocX", at + 1, "latin1");
writeFileSync(dstExe, exe, { mode: 0o755 });
console.log(`patched ${src} -> ${dstExe} (offset 0x${(at + 1).toString(16)})`);

// ---- 2. forwarder-only bcryptprimitives.dll ----
const RVA = 0x1000, FA = 0x200;
const strs = [
  "bcryptprimitives.dll",
  "ProcessPrng",
  "advapi32.SystemFunction036",
];
const offStr = 40 + 4 + 4 + 2; // export dir + EAT[1] + names[1] + ordinals[1]
const rvaOf = [];
let strBytes = Buffer.alloc(0);
for (const s of strs) {
  rvaOf.push(RVA + offStr + strBytes.length);
  strBytes = Buffer.concat([strBytes, Buffer.from(s + "\0", "latin1")]);
}
const expSize = offStr + strBytes.length;
const rawSize = Math.ceil(expSize / FA) * FA;
const sect = Buffer.alloc(rawSize);
// IMAGE_EXPORT_DIRECTORY
sect.writeUInt32LE(rvaOf[0], 12); // Name
sect.writeUInt32LE(1, 16); // Base
sect.writeUInt32LE(1, 20); // NumberOfFunctions
sect.writeUInt32LE(1, 24); // NumberOfNames
sect.writeUInt32LE(RVA + 40, 28); // AddressOfFunctions
sect.writeUInt32LE(RVA + 44, 32); // AddressOfNames
sect.writeUInt32LE(RVA + 48, 36); // AddressOfNameOrdinals
sect.writeUInt32LE(rvaOf[2], 40); // EAT[0] -> forwarder string (inside export dir)
sect.writeUInt32LE(rvaOf[1], 44); // names[0] -> "ProcessPrng"
sect.writeUInt16LE(0, 48); // ordinals[0]
strBytes.copy(sect, offStr);

const hdr = Buffer.alloc(FA);
hdr.write("MZ", 0, "latin1");
hdr.writeUInt32LE(64, 0x3c); // e_lfanew
let p = 64;
hdr.write("PE\0\0", p, "latin1");
p += 4;
// IMAGE_FILE_HEADER
hdr.writeUInt16LE(0x8664, p);
hdr.writeUInt16LE(1, p + 2); // machine, 1 section
hdr.writeUInt16LE(240, p + 16);
hdr.writeUInt16LE(0x2022, p + 18); // opt hdr size, DLL|EXE|LAA
p += 20;
// IMAGE_OPTIONAL_HEADER64
const o = p;
hdr.writeUInt16LE(0x20b, o);
hdr.writeUInt8(14, o + 2);
hdr.writeUInt32LE(rawSize, o + 8); // SizeOfInitializedData
hdr.writeUInt32LE(RVA, o + 20); // BaseOfCode
hdr.writeBigUInt64LE(0x180000000n, o + 24); // ImageBase
hdr.writeUInt32LE(0x1000, o + 32);
hdr.writeUInt32LE(FA, o + 36); // alignments
hdr.writeUInt16LE(6, o + 40);
hdr.writeUInt16LE(6, o + 48); // OS / subsystem version
hdr.writeUInt32LE(RVA + 0x1000, o + 56); // SizeOfImage
hdr.writeUInt32LE(FA, o + 60); // SizeOfHeaders
hdr.writeUInt16LE(3, o + 68);
hdr.writeUInt16LE(0x0140, o + 70); // CUI; DYNAMIC_BASE|NX_COMPAT
hdr.writeBigUInt64LE(0x100000n, o + 72);
hdr.writeBigUInt64LE(0x1000n, o + 80);
hdr.writeBigUInt64LE(0x100000n, o + 88);
hdr.writeBigUInt64LE(0x1000n, o + 96);
hdr.writeUInt32LE(16, o + 108); // NumberOfRvaAndSizes
hdr.writeUInt32LE(RVA, o + 112);
hdr.writeUInt32LE(expSize, o + 116); // export directory
p = o + 240;
// section header ".rdata"
hdr.write(".rdata", p, "latin1");
hdr.writeUInt32LE(expSize, p + 8);
hdr.writeUInt32LE(RVA, p + 12);
hdr.writeUInt32LE(rawSize, p + 16);
hdr.writeUInt32LE(FA, p + 20);
hdr.writeUInt32LE(0x40000040, p + 36); // INITIALIZED_DATA | MEM_READ
writeFileSync(dstDll, Buffer.concat([hdr, sect]));
console.log(`wrote ${dstDll} (${hdr.length + sect.length} bytes)`);
