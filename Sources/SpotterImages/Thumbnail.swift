import CJPEG
import CPNG

/// Why an image got no thumbnail.
public enum ImageError: Error, Sendable, Equatable {
    /// The header says more pixels (or a longer side) than `ThumbnailBounds` allow: refused before anything was
    /// decoded (a decompression bomb is a small file whose header promises a huge image).
    case tooLarge(width: Int, height: Int)
    /// Not a JPEG or PNG this module reads, or truncated or damaged.
    case corrupt
    /// A JPEG in a colour space with no RGB conversion (CMYK), or a type with no decoder here (WebP, HEIC, GIF).
    case unsupported
    /// The decoder could not allocate its buffers.
    case noMemory
}

/// What a thumbnail may cost and how big it comes out.
public struct ThumbnailBounds: Sendable, Equatable {
    /// The longest side of the thumbnail.
    public var side: Int
    /// The most pixels an original may have (width × height, read from the header).
    public var maxPixels: Int
    /// The longest side an original may have.
    public var maxSide: Int
    /// The JPEG quality of the thumbnail (1–100).
    public var quality: Int

    public init(side: Int = 256, maxPixels: Int = 40_000_000, maxSide: Int = 30_000, quality: Int = 80) {
        self.side = side
        self.maxPixels = maxPixels
        self.maxSide = maxSide
        self.quality = quality
    }

    /// 256 × 256 at quality 80, from originals of at most 40 megapixels and 30 000 pixels a side.
    public static let standard = ThumbnailBounds()
}

/// A thumbnail: a baseline JPEG and its dimensions.
public struct Thumbnail: Sendable, Equatable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
}

/// Makes thumbnails of JPEG and PNG images: the header is read and checked against the bounds first, then the image
/// is decoded (a JPEG at libjpeg's smallest sufficient scale), turned upright by its EXIF orientation, scaled to fit
/// `bounds.side` × `bounds.side` keeping its aspect ratio (never enlarged), flattened onto white if it has alpha, and
/// encoded as a JPEG. Pure and blocking (CPU only, no files): call it off the loop.
public enum Thumbnailer {
    /// libjpeg's own working memory (a progressive JPEG keeps its coefficients whole) is capped at this.
    static let jpegMemoryLimit = 256 * 1024 * 1024

    public static func thumbnail(of data: [UInt8], bounds: ThumbnailBounds = .standard) throws(ImageError) -> Thumbnail {
        let image: Pixels
        var orientation: Int?
        if data.starts(with: [0xFF, 0xD8, 0xFF]) {
            image = try decodeJPEG(data, bounds)
            orientation = ExifOrientation.read(fromJPEG: data)
        } else if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            image = try decodePNG(data, bounds)
        } else {
            throw .unsupported
        }
        // Scaled first, then turned (fitting a square box does not care which way up): fewer pixels to move.
        var scaled = image.fitting(bounds.side)
        if let orientation { scaled = scaled.oriented(orientation) }
        return Thumbnail(jpeg: try encodeJPEG(scaled, quality: bounds.quality), width: scaled.width, height: scaled.height)
    }

    /// Encodes `pixels` (`width` × `height` × 3 bytes of RGB) as a JPEG of `quality`.
    public static func encodeJPEG(rgb pixels: [UInt8], width: Int, height: Int, quality: Int = 80) throws(ImageError) -> [UInt8] {
        guard width > 0, height > 0, width <= 65_500, height <= 65_500, pixels.count == width * height * 3 else { throw .corrupt }
        return try encodeJPEG(Pixels(width: width, height: height, rgb: pixels), quality: quality)
    }

    static func encodeJPEG(_ image: Pixels, quality: Int) throws(ImageError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = image.rgb.withUnsafeBufferPointer {
            spotter_jpeg_encode($0.baseAddress, UInt32(image.width), UInt32(image.height), Int32(min(max(quality, 1), 100)),
                                &out, &size)
        }
        guard status == 0, let out else { throw .noMemory }
        defer { spotter_jpeg_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    static func decodeJPEG(_ data: [UInt8], _ bounds: ThumbnailBounds) throws(ImageError) -> Pixels {
        var out: UnsafeMutablePointer<UInt8>?
        var (width, height, fullWidth, fullHeight): (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        let status = data.withUnsafeBufferPointer {
            spotter_jpeg_decode($0.baseAddress, UInt($0.count), UInt(bounds.maxPixels), UInt32(clamping: bounds.maxSide),
                                UInt32(clamping: bounds.side), Int(jpegMemoryLimit), &out, &width, &height,
                                &fullWidth, &fullHeight)
        }
        switch status {
        case 0:
            guard let out else { throw .noMemory }
            defer { spotter_jpeg_free(out) }
            return Pixels(width: Int(width), height: Int(height),
                          rgb: Array(UnsafeBufferPointer(start: out, count: Int(width) * Int(height) * 3)))
        case 2: throw .tooLarge(width: Int(fullWidth), height: Int(fullHeight))
        case 3: throw .unsupported
        case 4: throw .noMemory
        default: throw .corrupt
        }
    }

    static func decodePNG(_ data: [UInt8], _ bounds: ThumbnailBounds) throws(ImageError) -> Pixels {
        // libpng reads from `data` until the image is freed: everything happens inside one borrow of its bytes.
        let result = data.withUnsafeBytes { source -> Result<Pixels, ImageError> in
            var image = png_image()
            image.version = spotter_png_image_version()
            defer { png_image_free(&image) }
            guard png_image_begin_read_from_memory(&image, source.baseAddress, source.count) != 0 else { return .failure(.corrupt) }
            // The header alone, checked before a byte of the image is decoded.
            let (width, height) = (Int(image.width), Int(image.height))
            guard width > 0, height > 0 else { return .failure(.corrupt) }
            guard width <= bounds.maxSide, height <= bounds.maxSide, width * height <= bounds.maxPixels else {
                return .failure(.tooLarge(width: width, height: height))
            }
            // RGB, libpng laying any transparency on white as it decodes: one buffer of 3 bytes a pixel (120 MB at the
            // 40 MP bound), no RGBA copy beside it.
            image.format = spotter_png_format_rgb()
            let stride = width * 3
            var rgb = [UInt8](repeating: 0, count: stride * height)
            var white = png_color(red: 255, green: 255, blue: 255)
            let finished = rgb.withUnsafeMutableBytes { png_image_finish_read(&image, &white, $0.baseAddress, Int32(stride), nil) }
            guard finished != 0 else { return .failure(.corrupt) }
            return .success(Pixels(width: width, height: height, rgb: rgb))
        }
        return try result.get()
    }

    /// Encodes `rgba` (`width` × `height` × 4 bytes) as a PNG: for tests and fixtures.
    public static func encodePNG(rgba: [UInt8], width: Int, height: Int) -> [UInt8]? {
        guard width > 0, height > 0, rgba.count == width * height * 4 else { return nil }
        var image = png_image()
        image.version = spotter_png_image_version()
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = spotter_png_format_rgba()
        var size = 0
        // First the size, then the bytes.
        guard rgba.withUnsafeBytes({ png_image_write_to_memory(&image, nil, &size, 0, $0.baseAddress, 0, nil) }) != 0 else { return nil }
        var out = [UInt8](repeating: 0, count: size)
        let written = out.withUnsafeMutableBytes { target in
            rgba.withUnsafeBytes { png_image_write_to_memory(&image, target.baseAddress, &size, 0, $0.baseAddress, 0, nil) }
        }
        guard written != 0 else { return nil }
        return Array(out.prefix(size))
    }
}
