"""simkit.GLVQ: GLVQ prototype learning as a scikit-learn estimator.

The training and the nearest-prototype search are simkit's (the compiled _simkit core,
the same code as `simkit lvq train` and `predict`); this module keeps scikit-learn's
conventions without importing scikit-learn: parameters set in __init__ and read by
get_params, fitted attributes ending in an underscore, fit/predict/score, so that
sklearn.base.clone, pipelines, grid searches and cross_val_score work on it.

NumPy is imported when a GLVQ is used, not with the package: `import simkit` (and its
calls that take no arrays) works without it.
"""
from . import _simkit

_PARAMS = ("prototypes_per_class", "epochs", "batch_size", "learning_rate", "schedule", "xi", "init",
           "standardize", "random_state", "device")


class GLVQ:
    """Generalised learning vector quantisation (Sato & Yamada): each class keeps
    `prototypes_per_class` prototypes; a sample's class is that of its nearest prototype
    (squared Euclidean distance); training moves the nearest prototype of the true class
    towards each sample and the nearest of another class away, in mini-batches of
    `batch_size` (1: plain SGD) over `epochs` passes (docs/lvq.md).

    learning_rate is relative to the data's scale (the mean squared distance of the
    samples to their class means); schedule "linear" decays it to 0, "constant" keeps it.
    xi is the sigmoid's slope; init "auto" (class means for one prototype a class, else
    k-means within each class), "means" or "kmeans"; standardize z-scores each feature
    with the training set's statistics; random_state seeds k-means and the shuffling
    (None: a fresh seed); device: "auto", "cpu", "cuda" or "cuda:N".

    Fitted attributes: classes_ (sorted labels), prototypes_ [classes x per class, features]
    (float32; prototype j belongs to class j // prototypes_per_class), prototype_labels_,
    mean_ and scale_ (standardize only, else None), loss_curve_ and train_error_curve_
    (one value an epoch), n_features_in_.
    """

    _estimator_type = "classifier"

    def __init__(self, prototypes_per_class=1, epochs=30, batch_size=32, learning_rate=0.01, schedule="linear",
                 xi=4.0, init="auto", standardize=False, random_state=1, device="auto"):
        self.prototypes_per_class = prototypes_per_class
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.schedule = schedule
        self.xi = xi
        self.init = init
        self.standardize = standardize
        self.random_state = random_state
        self.device = device

    # ---- scikit-learn's estimator protocol
    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in _PARAMS}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in _PARAMS:
                raise ValueError(f"invalid parameter {name!r} for GLVQ (valid: {', '.join(_PARAMS)})")
            setattr(self, name, value)
        return self

    def __sklearn_tags__(self):  # scikit-learn >= 1.6 asks for tags; older versions read _estimator_type
        from sklearn.base import BaseEstimator, ClassifierMixin

        class _Classifier(ClassifierMixin, BaseEstimator):
            pass

        return _Classifier().__sklearn_tags__()

    def __repr__(self):
        changed = [f"{n}={getattr(self, n)!r}" for n in _PARAMS
                   if getattr(self, n) != GLVQ.__init__.__defaults__[_PARAMS.index(n)]]
        return f"GLVQ({', '.join(changed)})"

    # ---- learning and prediction
    def fit(self, X, y):
        """Trains the prototypes on X ([samples, features]) and y (labels of any kind)."""
        import numpy as np

        X = _samples(X)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != len(X):
            raise ValueError(f"y: expected {len(X)} labels (a 1-D array), got shape {y.shape}")
        classes, labels = np.unique(y, return_inverse=True)
        seed = self.random_state
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 63))
        elif not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"random_state: expected a non-negative int or None, got {seed!r}")
        result = _simkit._lvq_train(
            X, labels.astype(np.uint32), [str(c) for c in classes], int(self.prototypes_per_class), int(self.epochs),
            int(self.batch_size), float(self.learning_rate), str(self.schedule), float(self.xi), str(self.init),
            int(seed), bool(self.standardize), str(self.device))
        self.classes_ = classes
        self.prototypes_ = result["prototypes"]
        self.prototype_labels_ = np.repeat(classes, int(self.prototypes_per_class))
        self.mean_ = result["mean"]
        self.scale_ = result["scale"]
        self.loss_curve_ = list(result["loss"])
        self.train_error_curve_ = list(result["train_error"])
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        """The class of each row of X: that of its nearest prototype."""
        nearest = self._nearest(X, 1)
        return self.classes_[nearest[:, 0]]

    def predict_top(self, X, top=3):
        """The `top` nearest classes of each row ([samples, top], nearest first; each
        class once, by its nearest prototype), as `simkit lvq predict --top`."""
        nearest = self._nearest(X, int(top))
        return self.classes_[nearest]

    def score(self, X, y, sample_weight=None):
        """The fraction of rows classified as their label (weighted by sample_weight)."""
        import numpy as np

        right = self.predict(X) == np.asarray(y)
        return float(np.average(right, weights=sample_weight))

    def _nearest(self, X, top):
        if not hasattr(self, "prototypes_"):
            raise AttributeError("this GLVQ is not fitted yet: call fit first")  # sklearn's NotFittedError is one
        X = _samples(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the model {self.n_features_in_}")
        return _simkit._lvq_predict([str(c) for c in self.classes_], int(self.prototypes_per_class), self.prototypes_,
                                    self.mean_, self.scale_, X, top, str(self.device))

    # ---- simkit's model files (.skq), shared with `simkit lvq`
    def save(self, path):
        """Writes the fitted model as .skq, which `simkit lvq predict --model` reads."""
        if not hasattr(self, "prototypes_"):
            raise AttributeError("this GLVQ is not fitted yet: call fit first")
        _simkit._lvq_write(path, [str(c) for c in self.classes_], int(self.prototypes_per_class), self.prototypes_,
                           self.mean_, self.scale_)

    @classmethod
    def load(cls, path, device="auto"):
        """A fitted GLVQ from an .skq model (`simkit lvq train -o`); its classes are the
        model's class names (str)."""
        import numpy as np

        model = _simkit._lvq_read(path)
        glvq = cls(prototypes_per_class=model["per_class"], standardize=model["mean"] is not None, device=device)
        glvq.classes_ = np.array(model["classes"])
        glvq.prototypes_ = model["prototypes"]
        glvq.prototype_labels_ = np.repeat(glvq.classes_, model["per_class"])
        glvq.mean_ = model["mean"]
        glvq.scale_ = model["scale"]
        glvq.n_features_in_ = glvq.prototypes_.shape[1]
        return glvq


def _samples(X):
    import numpy as np

    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D array [samples, features], got shape {X.shape}")
    return X
