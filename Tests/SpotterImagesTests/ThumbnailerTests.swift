import Testing
@testable import SpotterImages

/// Images made here with libjpeg and libpng themselves (no fixture files): a gradient of any size, so each test
/// says the dimensions it needs.
enum Fixture {
    static func rgb(_ width: Int, _ height: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let index = (y * width + x) * 3
                pixels[index] = UInt8(x * 255 / max(1, width - 1))
                pixels[index + 1] = UInt8(y * 255 / max(1, height - 1))
                pixels[index + 2] = 128
            }
        }
        return pixels
    }

    static func jpeg(_ width: Int, _ height: Int) throws -> [UInt8] {
        try Thumbnailer.encodeJPEG(rgb: rgb(width, height), width: width, height: height, quality: 90)
    }

    static func png(_ width: Int, _ height: Int, alpha: UInt8 = 255) -> [UInt8] {
        let rgb = rgb(width, height)
        var rgba: [UInt8] = []
        rgba.reserveCapacity(width * height * 4)
        for pixel in 0..<(width * height) { rgba += rgb[(pixel * 3)..<(pixel * 3 + 3)] + [alpha] }
        return Thumbnailer.encodePNG(rgba: rgba, width: width, height: height)!
    }

    /// The pixels of a JPEG, full size.
    static func decoded(_ jpeg: [UInt8]) throws -> Pixels {
        try Thumbnailer.decodeJPEG(jpeg, ThumbnailBounds(side: 1 << 20))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }

    static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A PNG whose (valid, checksummed) header says `width` × `height`, followed by a few bytes of image data: a
    /// decompression bomb's shape.
    static func pngHeader(_ width: UInt32, _ height: UInt32) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
            + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
            + chunk("IEND", [])
    }

    /// `jpeg` with its frame header (SOF0) saying `width` × `height`.
    static func withFrameSize(_ jpeg: [UInt8], _ width: Int, _ height: Int) -> [UInt8] {
        var bytes = jpeg
        let sof = (0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }!
        bytes[sof + 5] = UInt8(height >> 8)
        bytes[sof + 6] = UInt8(height & 0xFF)
        bytes[sof + 7] = UInt8(width >> 8)
        bytes[sof + 8] = UInt8(width & 0xFF)
        return bytes
    }

    /// `jpeg` with an EXIF segment (big-endian TIFF) right after its SOI saying `orientation`.
    static func withOrientation(_ jpeg: [UInt8], _ orientation: UInt8) -> [UInt8] {
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8,  // header, IFD at 8
                             0, 1,  // one entry
                             0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0,  // Orientation, SHORT, 1
                             0, 0, 0, 0]
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return Array(jpeg[0..<2]) + [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + Array(jpeg[2...])
    }
}

@Suite("Thumbnails of JPEG and PNG")
struct ThumbnailerTests {
    @Test("a JPEG is scaled to fit 256 × 256, keeping its aspect ratio, and comes out a JPEG of those dimensions")
    func jpegFits() throws {
        let thumbnail = try Thumbnailer.thumbnail(of: try Fixture.jpeg(600, 400))
        #expect((thumbnail.width, thumbnail.height) == (256, 171))
        #expect(thumbnail.jpeg.starts(with: [0xFF, 0xD8, 0xFF]))
        let decoded = try Fixture.decoded(thumbnail.jpeg)
        #expect((decoded.width, decoded.height) == (256, 171))
        // The gradient survived: dark on the left, bright on the right (red channel).
        #expect(decoded.rgb[0] < 30)
        #expect(decoded.rgb[(255) * 3] > 225)
    }

    @Test("a big JPEG is read at libjpeg's reduced scale and still fits")
    func bigJPEG() throws {
        let thumbnail = try Thumbnailer.thumbnail(of: try Fixture.jpeg(3000, 2000))
        #expect((thumbnail.width, thumbnail.height) == (256, 171))
    }

    @Test("a tall PNG fits by its height")
    func pngFits() throws {
        let thumbnail = try Thumbnailer.thumbnail(of: Fixture.png(300, 600))
        #expect((thumbnail.width, thumbnail.height) == (128, 256))
        let decoded = try Fixture.decoded(thumbnail.jpeg)
        #expect((decoded.width, decoded.height) == (128, 256))
    }

    @Test("a 1 × 1 image stays 1 × 1 (never enlarged)", arguments: [true, false])
    func onePixel(_ isJPEG: Bool) throws {
        let thumbnail = try Thumbnailer.thumbnail(of: isJPEG ? try Fixture.jpeg(1, 1) : Fixture.png(1, 1))
        #expect((thumbnail.width, thumbnail.height) == (1, 1))
        #expect(try Fixture.decoded(thumbnail.jpeg).width == 1)
    }

    @Test("a 10000 × 1 strip becomes 256 × 1", arguments: [true, false])
    func strip(_ isJPEG: Bool) throws {
        let thumbnail = try Thumbnailer.thumbnail(of: isJPEG ? try Fixture.jpeg(10000, 1) : Fixture.png(10000, 1))
        #expect((thumbnail.width, thumbnail.height) == (256, 1))
        let vertical = try Thumbnailer.thumbnail(of: Fixture.png(1, 10000))
        #expect((vertical.width, vertical.height) == (1, 256))
    }

    @Test("a PNG's transparency is laid on white; half-transparent black is grey")
    func alpha() throws {
        let clear = Thumbnailer.encodePNG(rgba: [255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0], width: 2, height: 2)!
        let white = try Fixture.decoded(try Thumbnailer.thumbnail(of: clear).jpeg)
        #expect(white.rgb.allSatisfy { $0 > 245 }, "\(white.rgb)")
        let half = Thumbnailer.encodePNG(rgba: [UInt8](repeating: 0, count: 64 * 4).enumerated().map { $0.offset % 4 == 3 ? 128 : 0 },
                                         width: 8, height: 8)!
        let grey = try Fixture.decoded(try Thumbnailer.thumbnail(of: half).jpeg)
        // libpng composites in linear light: half of white's light is sRGB ≈ 188, not 128.
        #expect(grey.rgb.allSatisfy { (178...198).contains($0) }, "\(Array(grey.rgb.prefix(6)))")
    }

    @Test("a header promising 100000 × 100000 is refused as too large before any decoding")
    func pngBomb() {
        #expect(throws: ImageError.tooLarge(width: 100_000, height: 100_000)) {
            try Thumbnailer.thumbnail(of: Fixture.pngHeader(100_000, 100_000))
        }
        // Within the side limit, over the pixel budget (8000 × 8000 = 64 MP > 40 MP).
        #expect(throws: ImageError.tooLarge(width: 8000, height: 8000)) {
            try Thumbnailer.thumbnail(of: Fixture.pngHeader(8000, 8000))
        }
        // One side absurd, few pixels in all.
        #expect(throws: ImageError.tooLarge(width: 40_000, height: 1)) {
            try Thumbnailer.thumbnail(of: Fixture.pngHeader(40_000, 1))
        }
    }

    @Test("a JPEG whose frame header says 65000 × 65000 is refused as too large")
    func jpegBomb() throws {
        let bomb = Fixture.withFrameSize(try Fixture.jpeg(16, 16), 65_000, 65_000)
        #expect(throws: ImageError.tooLarge(width: 65_000, height: 65_000)) { try Thumbnailer.thumbnail(of: bomb) }
        let wide = Fixture.withFrameSize(try Fixture.jpeg(16, 16), 8000, 6000)  // 48 MP
        #expect(throws: ImageError.tooLarge(width: 8000, height: 6000)) { try Thumbnailer.thumbnail(of: wide) }
    }

    @Test("the bound is the caller's: a smaller budget refuses a smaller image")
    func customBounds() throws {
        let bounds = ThumbnailBounds(maxPixels: 100)
        #expect(throws: ImageError.tooLarge(width: 11, height: 10)) { try Thumbnailer.thumbnail(of: Fixture.png(11, 10), bounds: bounds) }
        #expect(throws: ImageError.tooLarge(width: 11, height: 10)) { try Thumbnailer.thumbnail(of: try Fixture.jpeg(11, 10), bounds: bounds) }
        #expect(try Thumbnailer.thumbnail(of: Fixture.png(10, 10), bounds: bounds).width == 10)
    }

    @Test("truncated and damaged files are refused as corrupt, without crashing")
    func corrupt() throws {
        let jpeg = try Fixture.jpeg(64, 64)
        let png = Fixture.png(64, 64)
        for cut in [3, 4, 20, jpeg.count / 2, jpeg.count - 2] {
            #expect(throws: ImageError.corrupt) { try Thumbnailer.thumbnail(of: Array(jpeg.prefix(cut))) }
        }
        for cut in [8, 12, 33, 40, png.count / 2] {  // (a missing IEND alone goes unnoticed: the image is whole)
            #expect(throws: ImageError.corrupt) { try Thumbnailer.thumbnail(of: Array(png.prefix(cut))) }
        }
        // The signatures with anything after them (the server's tests upload such "images").
        #expect(throws: ImageError.corrupt) { try Thumbnailer.thumbnail(of: [0xFF, 0xD8, 0xFF, 0xE0] + Array("another avatar".utf8)) }
        #expect(throws: ImageError.corrupt) {
            try Thumbnailer.thumbnail(of: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("a tiny picture".utf8))
        }
        // A marker in the middle of the compressed data: libjpeg only warns ("corrupt JPEG data"), the thumbnail is
        // refused. (Flipped bits in the data itself decode to other pixels: JPEG has no checksum to notice them.)
        let damaged = Array(jpeg[..<(jpeg.count / 2)]) + [0xFF, 0xD3] + Array(jpeg[(jpeg.count / 2)...])
        #expect(throws: ImageError.corrupt) { try Thumbnailer.thumbnail(of: damaged) }
        var badCRC = png
        badCRC[png.count / 2] ^= 0xFF
        #expect(throws: ImageError.corrupt) { try Thumbnailer.thumbnail(of: badCRC) }
        // Dimensions of zero in a checksummed header.
        #expect(throws: ImageError.self) { try Thumbnailer.thumbnail(of: Fixture.pngHeader(0, 10)) }
    }

    @Test("other types get no thumbnail", arguments: [
        [], [0x47, 0x49, 0x46, 0x38, 0x39, 0x61], Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), Array("%PDF-1.7".utf8),
    ] as [[UInt8]])
    func unsupported(_ bytes: [UInt8]) {
        #expect(throws: ImageError.unsupported) { try Thumbnailer.thumbnail(of: bytes) }
    }

    @Test("EXIF orientation 6 (rotated 90° clockwise) turns the thumbnail upright")
    func orientation() throws {
        // Left half red, right half blue, 40 × 20.
        var rgb = [UInt8](repeating: 0, count: 40 * 20 * 3)
        for y in 0..<20 { for x in 0..<40 { rgb[(y * 40 + x) * 3 + (x < 20 ? 0 : 2)] = 255 } }
        let jpeg = try Thumbnailer.encodeJPEG(rgb: rgb, width: 40, height: 20, quality: 95)
        #expect(ExifOrientation.read(fromJPEG: Fixture.withOrientation(jpeg, 6)) == 6)
        let thumbnail = try Thumbnailer.thumbnail(of: Fixture.withOrientation(jpeg, 6))
        #expect((thumbnail.width, thumbnail.height) == (20, 40))
        let upright = try Fixture.decoded(thumbnail.jpeg)
        // The left (red) half is on top now, the blue one below.
        #expect(upright.rgb[(5 * 20 + 10) * 3] > 200 && upright.rgb[(5 * 20 + 10) * 3 + 2] < 60)
        #expect(upright.rgb[(35 * 20 + 10) * 3 + 2] > 200 && upright.rgb[(35 * 20 + 10) * 3] < 60)
        // Orientation 1 and 3 keep the dimensions.
        #expect(try Thumbnailer.thumbnail(of: Fixture.withOrientation(jpeg, 3)).width == 40)
        #expect(try Thumbnailer.thumbnail(of: Fixture.withOrientation(jpeg, 1)).width == 40)
    }

    @Test("every orientation maps pixels as EXIF defines it")
    func orientationMaps() {
        // 2 × 1: A B
        let image = Pixels(width: 2, height: 1, rgb: [1, 1, 1, 2, 2, 2])
        #expect(image.oriented(2).rgb == [2, 2, 2, 1, 1, 1])
        #expect(image.oriented(3).rgb == [2, 2, 2, 1, 1, 1])
        #expect(image.oriented(4).rgb == [1, 1, 1, 2, 2, 2])
        #expect(image.oriented(5).rgb == [1, 1, 1, 2, 2, 2] && image.oriented(5).height == 2)
        #expect(image.oriented(6).rgb == [1, 1, 1, 2, 2, 2] && image.oriented(6).width == 1)
        #expect(image.oriented(7).rgb == [2, 2, 2, 1, 1, 1])
        #expect(image.oriented(8).rgb == [2, 2, 2, 1, 1, 1])
        #expect(image.oriented(9) == image && image.oriented(0) == image)
    }

    @Test("a malformed EXIF segment is ignored, never read past its end")
    func malformedExif() throws {
        let jpeg = try Fixture.jpeg(8, 8)
        var bad = Fixture.withOrientation(jpeg, 6)
        bad[4 + 2 + 6 + 4 + 3] = 200  // the IFD offset points far outside the segment
        #expect(ExifOrientation.read(fromJPEG: bad) == nil)
        #expect(ExifOrientation.read(fromJPEG: [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF]) == nil)
        #expect(ExifOrientation.read(fromJPEG: [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01]) == nil)
        #expect(try Thumbnailer.thumbnail(of: bad).width == 8)
    }
}

@Suite("Thumbnails of damaged files")
struct DamagedImageTests {
    /// Seeded so a failure replays: a few bytes of a valid image overwritten, or the file cut short, many times.
    /// Whatever libjpeg and libpng make of each, the answer is a thumbnail within bounds or an error, never a crash.
    @Test("mutated JPEGs and PNGs never crash and never exceed the bounds", arguments: [true, false])
    func mutations(_ isJPEG: Bool) throws {
        let original = isJPEG ? try Fixture.jpeg(48, 32) : Fixture.png(48, 32)
        var state: UInt64 = isJPEG ? 0x9E37_79B9_7F4A_7C15 : 0xD1B5_4A32_D192_ED03
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var (made, refused) = (0, 0)
        for _ in 0..<400 {
            var bytes = original
            for _ in 0..<(1 + next(4)) { bytes[8 + next(bytes.count - 8)] = UInt8(next(256)) }
            if next(4) == 0 { bytes = Array(bytes.prefix(8 + next(bytes.count - 8))) }
            do {
                let thumbnail = try Thumbnailer.thumbnail(of: bytes)
                #expect(thumbnail.width >= 1 && thumbnail.width <= 256 && thumbnail.height >= 1 && thumbnail.height <= 256)
                made += 1
            } catch {
                refused += 1
            }
        }
        #expect(made + refused == 400)
    }
}
