"""eitstream's Python side: subscribe to live images, read recordings, plot them."""
from .header import HEADER, decode_batch, decode_header
from .files import ImageFile, read_images, read_frames, geometry_of
from .subscriber import Subscriber, Image
from .plot import plot_image

__all__ = ["HEADER", "decode_batch", "decode_header", "ImageFile", "read_images", "read_frames", "geometry_of",
           "Subscriber", "Image", "plot_image"]
__version__ = "0.1.0"
