import { describe, expect, it } from "vitest";
import { berShape } from "../../../src/probe/connect/ber-shape.js";
import { freshStaple, hostileStapleBody } from "../../fixtures/hostile-staples.js";
import { getOcspFixture } from "../../fixtures/ocsp-staples.js";
import { seededRandom } from "../../fixtures/seeded-random.js";

const WIDE_OPEN = { maxElements: 1_000_000, maxDepth: 1_000_000 };

describe("berShape: the tree a BER parser would make, from the headers alone", () => {
  it("sizes a responder's answers far inside the staple's limits (about 100 elements, 12-20 deep)", async () => {
    const fixture = await getOcspFixture();
    for (const answer of Object.values(fixture.answers)) {
      const shape = berShape(answer, WIDE_OPEN);
      expect(shape.kind).toBe("fits");
      if (shape.kind !== "fits") continue;
      expect(shape.elements).toBeGreaterThan(60);
      expect(shape.elements).toBeLessThan(200);
      expect(shape.depth).toBeGreaterThan(8);
      expect(shape.depth).toBeLessThan(24);
    }
  });

  it("stops at the first limit passed: too many elements, or too deep", () => {
    const wide = freshStaple("wide", 8_000)(0);
    expect(berShape(wide, { maxElements: 600, maxDepth: 32 })).toEqual({ kind: "too-large" });
    expect(berShape(wide, { maxElements: 8_000, maxDepth: 32 })).toEqual({ kind: "too-large" });
    const deep = hostileStapleBody("deep", 8_000);
    expect(berShape(deep, { maxElements: 600, maxDepth: 32 })).toEqual({ kind: "too-large" });
    const embedded = hostileStapleBody("embedded", 4_000);
    expect(berShape(embedded, { maxElements: 600, maxDepth: 32 })).toEqual({ kind: "too-large" });
    expect(berShape(embedded, { maxElements: 100_000, maxDepth: 32 })).toEqual({ kind: "too-large" });
    // However deep a caller allows, the walk recurses no deeper than its own ceiling.
    expect(berShape(hostileStapleBody("deep", 8_000), { maxElements: 100_000, maxDepth: 100_000 })).toEqual({ kind: "too-large" });
  });

  it("indefinite lengths end at their end-of-contents; a primitive one, a length past the end or a bad header is malformed", () => {
    expect(berShape(Buffer.from([0x30, 0x80, 0x05, 0x00, 0x00, 0x00]), WIDE_OPEN)).toEqual({ kind: "fits", elements: 2, depth: 2 });
    expect(berShape(Buffer.from([0x30, 0x80, 0x05, 0x00]), WIDE_OPEN)).toEqual({ kind: "malformed" });
    expect(berShape(Buffer.from([0x04, 0x80, 0x00, 0x00]), WIDE_OPEN)).toEqual({ kind: "malformed" });
    expect(berShape(Buffer.from([0x30, 0x05, 0x05, 0x00]), WIDE_OPEN)).toEqual({ kind: "malformed" });
    expect(berShape(Buffer.from([0x30, 0xff]), WIDE_OPEN)).toEqual({ kind: "malformed" });
    expect(berShape(Buffer.from([0x1f, 0x81, 0x81]), WIDE_OPEN)).toEqual({ kind: "malformed" });
    expect(berShape(Buffer.from([0x1f, 0x81, 0x01, 0x00]), WIDE_OPEN)).toEqual({ kind: "fits", elements: 1, depth: 1 });
    expect(berShape(new Uint8Array(0), WIDE_OPEN)).toEqual({ kind: "malformed" });
    // Bytes after the one element are not looked at, as a parser reading one value ignores them.
    expect(berShape(Buffer.from([0x05, 0x00, 0xff, 0xff]), WIDE_OPEN)).toEqual({ kind: "fits", elements: 1, depth: 1 });
  });

  it("a primitive OCTET STRING's contents count when they parse, and when they do not", () => {
    // OCTET STRING { NULL NULL }: asn1js makes three nodes.
    expect(berShape(Buffer.from([0x04, 0x04, 0x05, 0x00, 0x05, 0x00]), WIDE_OPEN)).toEqual({ kind: "fits", elements: 3, depth: 2 });
    // BIT STRING with no unused bits is tried too; with unused bits it is not.
    expect(berShape(Buffer.from([0x03, 0x03, 0x00, 0x05, 0x00]), WIDE_OPEN)).toMatchObject({ elements: 2 });
    expect(berShape(Buffer.from([0x03, 0x03, 0x01, 0x05, 0x00]), WIDE_OPEN)).toMatchObject({ elements: 1 });
    // Contents that are no BER: the outer element still fits.
    expect(berShape(Buffer.from([0x04, 0x02, 0x30, 0x09]), WIDE_OPEN)).toMatchObject({ kind: "fits" });
  });

  it("gives every random input a value, within its limits", () => {
    const random = seededRandom(36);
    for (let round = 0; round < 2_000; round++) {
      const bytes = Buffer.alloc(1 + Math.floor(random() * 512));
      for (let at = 0; at < bytes.length; at++)
        bytes[at] = random() < 0.3 ? ([0x30, 0x80, 0x04, 0x00, 0x24][Math.floor(random() * 5)] ?? 0) : Math.floor(random() * 256);
      const shape = berShape(bytes, { maxElements: 64, maxDepth: 8 });
      expect(["fits", "too-large", "malformed"]).toContain(shape.kind);
      if (shape.kind === "fits") {
        expect(shape.elements).toBeLessThanOrEqual(64);
        expect(shape.depth).toBeLessThanOrEqual(8);
      }
    }
  });
});
